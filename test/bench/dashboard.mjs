// The dashboard in real Chromium over a week of data: 200 clients × 30 extension ids × 7 days of minute rollups,
// served by the collector (child process). Measures, per navigation, the time from navigation start until the
// matrix is on screen with its handlers attached (the page's `extscope:ready` mark), then filter changes: from
// the input event to the re-rendered matrix. Prints the bundle size.
//
//   npm run build && node test/bench/dashboard.mjs
//   env: BENCH_RUNS (10 navigations, 10 of each filter change), BENCH_STRIDE (10: each instance reports one of its
//   clients every 10 minutes), BENCH_DB (keep the loaded database at this path and reuse it on the next run),
//   BENCH_FLEET=large (1,000 clients × 100 extension ids × 500 instances in 50 services instead)

/* global document -- the functions given to page.evaluate run in the page */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { rng } from './lib/fleet.mjs';
import { loadRollups } from './lib/rollup-loader.mjs';
import { startCollectorChild, startupMaintenance, warmUpState } from './lib/collector-child.mjs';
import { size } from './lib/smoke.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? size(10, 1));
const STRIDE = Number(process.env.BENCH_STRIDE ?? size(10, 120));
const DAYS = 7;
const LARGE = process.env.BENCH_FLEET === 'large';
const CLIENTS = LARGE ? 1000 : 200;
const EXTENSIONS = Array.from({ length: LARGE ? 100 : 30 }, (_, index) =>
  index < 4
    ? ['io.modelcontextprotocol/tasks', 'io.modelcontextprotocol/ui', 'io.modelcontextprotocol/sampling-tools', 'io.modelcontextprotocol/elicitation-url'][
        index
      ]
    : `com.vendor${index % 6}.mcp/feature-${index}`,
);
const SERVICES = LARGE ? 50 : 20;
const PER_SERVICE = LARGE ? 10 : 5;
const CLIENTS_PER_INSTANCE = 20;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** 200 client names (one version each), each declaring 5-12 of the 30 ids; 100 instances advertising 12 each. */
function plan() {
  const random = rng(7);
  const pick = (n) => {
    const set = new Set();
    while (set.size < n) set.add(EXTENSIONS[Math.floor(random() * EXTENSIONS.length)]);
    return [...set];
  };
  const clients = Array.from({ length: CLIENTS }, (_, index) => ({
    name: `client-${String(index).padStart(LARGE ? 4 : 3, '0')}`,
    version: `${1 + (index % 4)}.0.0`,
    declared: pick(5 + Math.floor(random() * 8)),
  }));
  const instances = [];
  for (let s = 0; s < SERVICES; s++) {
    const advertised = pick(12);
    for (let i = 0; i < PER_SERVICE; i++) {
      const index = s * PER_SERVICE + i;
      // Every client is used by as many instances (10 of 100; 10 of 500 in the large fleet), in a fixed rotation.
      const used = Array.from({ length: CLIENTS_PER_INSTANCE }, (_, k) => clients[(index + k * (CLIENTS / CLIENTS_PER_INSTANCE)) % CLIENTS]);
      instances.push({
        service: `service-${s}`,
        instanceId: `instance-${s}-${i}`,
        host: `host-${s}-${i}`,
        serverName: `mcp-server-${s}`,
        advertised,
        clients: used,
      });
    }
  }
  return { clients, instances };
}

/** Seven days through the store's own write path below HTTP. */
function load(dbPath) {
  return loadRollups(dbPath, { instances: plan().instances, days: DAYS, stride: STRIDE, seed: 3 });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const max = (values) => Math.max(...values);
/** Median and max; a run whose mark was not set (a render that added no rows) is counted apart, not as NaN. */
const fmt = (values) => {
  const timed = values.filter((value) => Number.isFinite(value));
  const missing = values.length - timed.length;
  if (timed.length === 0) return `no timed run (${values.length} run${values.length === 1 ? '' : 's'})`;
  return `median ${median(timed).toFixed(0).padStart(4)} ms, max ${max(timed).toFixed(0).padStart(4)} ms${missing === 0 ? '' : ` (${missing} of ${values.length} without the mark)`}`;
};

if (!existsSync('/usr/bin/chromium')) throw new Error('/usr/bin/chromium is missing (apt-get install -y --no-install-recommends chromium)');
const sizes = JSON.parse(readFileSync(join(ROOT, 'dashboard', 'dist', 'sizes.json'), 'utf8'));
const dir = mkdtempSync(join(tmpdir(), 'extscope-bench-dashboard-'));
const dbPath = process.env.BENCH_DB ?? join(dir, 'dashboard.db');
let collector;
let context;
try {
  const started = performance.now();
  const reuse = process.env.BENCH_DB !== undefined && existsSync(dbPath);
  const loaded = reuse ? { points: NaN, requests: NaN, instances: SERVICES * PER_SERVICE } : await load(dbPath);
  if (reuse) console.log(`dashboard: reusing ${dbPath} (its data is relative to when it was loaded)`);
  else
    console.log(
      `dashboard: ${CLIENTS} clients × ${EXTENSIONS.length} extension ids × ${DAYS} days, ${loaded.instances} instances (${SERVICES} services), ${loaded.points.toLocaleString('en')} points, ${loaded.requests.toLocaleString('en')} requests; database ${(statSync(dbPath).size / 1e6).toFixed(0)} MB, loaded in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
  collector = await startCollectorChild(dbPath);
  // Measured once the retention pass run at start is over (reads beside it wait between its chunks).
  const maintenance = await startupMaintenance(collector.url);
  console.log(`retention pass at start: ${maintenance === undefined ? 'not reported' : `${maintenance.toFixed(1)} s, over before the page is driven`}`);
  // Chromium's user-data directory lives inside this run's directory, so it goes with it.
  const profile = join(dir, 'chromium');
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    // Whatever else Chromium puts in a temporary directory goes into this run's directory too.
    env: { ...process.env, TMPDIR: dir },
    headless: true,
    viewport: { width: 1366, height: 768 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-quic',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // `extscope:first-rows`: the matrix's rows are in the DOM with their handlers; `extscope:painted`: the frame after
  // the render has been painted and the main thread is free again (what "interactive" means here).
  const marks = () =>
    page.evaluate(async () => {
      for (let waited = 0; waited < 10_000 && performance.getEntriesByName('extscope:painted').length === 0; waited += 5)
        await new Promise((resolve) => setTimeout(resolve, 5));
      const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? NaN;
      return { rows: at('extscope:first-rows'), painted: at('extscope:painted') };
    });
  const waitReady = () => page.locator('body[data-ready]').waitFor({ state: 'attached', timeout: 30_000 });

  // Navigation: navigation start → matrix rendered (7 days, 200 rows × 30 columns). The first is cold: the page in a new
  // browser profile, against a collector just started: nothing asked of it yet but by its own warm-up read of the last
  // 7 days, over or still under way (printed beside the cold figure).
  const navigations = [];
  let apiMs = [];
  // The collector reads the last 7 days once its retention pass at start is over (collector/warm-up.ts): whether that
  // read was over when the first navigation started, and how long it took, are printed beside the cold figure.
  const warmUpAtColdStart = await warmUpState(collector.url);
  for (let run = 0; run <= RUNS; run++) {
    await page.goto(`${collector.url}/?range=7d`);
    await waitReady();
    const summary = await page.locator('p.summary').first().innerText();
    // The page asks for the 500 busiest rows (the API's default limit) and every id up to its column limit.
    if (!summary.includes(` of ${CLIENTS.toLocaleString('en')} clients, `) || !summary.includes(` of ${EXTENSIONS.length} extensions`))
      throw new Error(`unexpected matrix: ${summary}`);
    // Rows are rendered as they come into view: the first screenful and some beyond it.
    const cells = await page.locator('td.cell').count();
    if (cells < 20 * Math.min(EXTENSIONS.length, 30)) throw new Error(`only ${cells} cells rendered`);
    navigations.push(await marks());
    apiMs.push(await page.evaluate(() => performance.getEntriesByType('resource').find((entry) => entry.name.includes('/api/v1/matrix'))?.duration ?? NaN));
  }
  const [cold, ...warm] = navigations;
  const rowsOf = (list) => list.map((entry) => entry.rows);
  const paintedOf = (list) => list.map((entry) => entry.painted);
  const [coldApi] = apiMs;
  apiMs = apiMs.slice(1);

  // Filter changes, from the input event to the re-rendered matrix.
  const change = async (act, arg) => {
    await page.evaluate(() => delete document.body.dataset.ready);
    const t0 = await page.evaluate(act, arg);
    await waitReady();
    const { rows, painted } = await marks();
    return { rows: rows - t0, painted: painted - t0 };
  };
  const typed = [];
  const sorted = [];
  const served = [];
  for (let run = 0; run < RUNS; run++) {
    typed.push(
      await change(() => {
        const input = document.querySelector('#matrix-rows');
        const t = performance.now();
        input.value = input.value === 'client-1' ? 'client-0' : 'client-1';
        input.dispatchEvent(new Event('input', { bubbles: true }));
        return t;
      }),
    );
  }
  await page.goto(`${collector.url}/?range=7d`);
  await waitReady();
  for (let run = 0; run < RUNS; run++) {
    sorted.push(
      await change((n) => {
        const t = performance.now();
        document.querySelectorAll('button.sort')[2 + (n % 5)].click();
        return t;
      }, run),
    );
  }
  for (let run = 0; run < RUNS; run++) {
    served.push(
      await change((n) => {
        const select = document.querySelector('#filter-service');
        const t = performance.now();
        select.value = `service-${n}`;
        select.dispatchEvent(new Event('change', { bubbles: true }));
        return t;
      }, run % SERVICES),
    );
  }
  // Regrouping the rows by instance (and back by client). Once the matrix is on screen the page reads the rows by
  // instance in the background: the first regrouping is timed right after the matrix is ready (that read under
  // way) and once the page is idle (as when a user reaches for the select); then back and forth.
  const regroup = (n) => {
    const select = document.querySelector('#filter-group');
    const t = performance.now();
    select.value = n % 2 === 0 ? 'instance' : 'client';
    select.dispatchEvent(new Event('change', { bubbles: true }));
    return t;
  };
  const idleAfterNavigation = async () => {
    const background = page.waitForResponse((response) => response.url().includes('/api/v1/matrix?') && response.url().includes('group=instance'), {
      timeout: 60_000,
    });
    await page.goto(`${collector.url}/?range=7d`);
    await waitReady();
    await (await background).finished();
  };
  const firstEarly = [];
  const firstIdle = [];
  for (let run = 0; run < Math.max(1, Math.floor(RUNS / 2)); run++) {
    await page.goto(`${collector.url}/?range=7d`);
    await waitReady();
    firstEarly.push(await change(regroup, 0));
    await idleAfterNavigation();
    firstIdle.push(await change(regroup, 0));
  }
  const regrouped = [];
  await idleAfterNavigation();
  for (let run = 0; run < RUNS; run++) regrouped.push(await change(regroup, run));
  // The trends view: four trend queries over every client, chart.js loaded on demand, four charts drawn.
  const trends = {};
  for (const range of ['24h', '7d']) {
    const times = [];
    for (let run = 0; run < Math.max(3, Math.floor(RUNS / 2)); run++) {
      await page.goto(`${collector.url}/?view=trends&range=${range}`);
      await waitReady();
      times.push(
        await page.evaluate(async () => {
          const drawn = () => [...document.querySelectorAll('canvas')].filter((canvas) => canvas.width > 0).length === 4;
          for (let waited = 0; waited < 20_000 && !drawn(); waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
          return performance.now();
        }),
      );
    }
    trends[range] = times;
  }
  const line = (label, list) => console.log(`${label.padEnd(56)} rows ${fmt(rowsOf(list))}   painted ${fmt(paintedOf(list))}`);
  console.log(
    `${'navigation → matrix, cold (first load)'.padEnd(56)} rows ${cold.rows.toFixed(0).padStart(4)} ms   painted ${cold.painted.toFixed(0).padStart(4)} ms   (GET /api/v1/matrix?from=-7d: ${coldApi.toFixed(0)} ms)`,
  );
  const warmUp = await warmUpState(collector.url);
  console.log(
    `${''.padEnd(56)} ${
      warmUp === undefined
        ? 'no warm-up at start (this build does not read the last 7 days before the first navigation)'
        : `warm-up at start (the last 7 days read once, as the first navigation would): ${warmUp.seconds === undefined ? 'not finished' : `${(warmUp.seconds * 1000).toFixed(0)} ms`}, ${warmUpAtColdStart?.done === true ? 'over' : 'under way'} when the cold navigation started`
    }`,
  );
  line(`navigation → matrix, warm (${RUNS} loads)`, warm);
  console.log(`${''.padEnd(56)} of which GET /api/v1/matrix?from=-7d: ${fmt(apiMs)}`);
  line('client text filter → re-rendered (30 ms debounce)', typed);
  line('sort by an extension column → re-rendered', sorted);
  line('service filter → fetched and re-rendered', served);
  line('first rows by instance, right after the matrix is ready', firstEarly);
  line('first rows by instance, the page idle', firstIdle);
  line('then rows by instance ↔ by client → re-rendered', regrouped);
  console.log(`${'trends view, 24 h (hourly steps) → 4 charts drawn'.padEnd(56)} ${fmt(trends['24h'])}`);
  console.log(`${'trends view, 7 d (daily steps) → 4 charts drawn'.padEnd(56)} ${fmt(trends['7d'])}`);
  const files = Object.entries(sizes.files)
    .map(([name, bytes]) => `${name} ${(bytes / 1024).toFixed(1)} KiB`)
    .join(', ');
  console.log(
    `bundle: ${(sizes.bytes / 1024).toFixed(1)} KiB minified, ${(sizes.gzipBytes / 1024).toFixed(1)} KiB gzip (${files}); the matrix view loads app + css only, chart.js is loaded by the chart views`,
  );
} finally {
  await context?.close();
  if (collector !== undefined) {
    collector.child.kill('SIGTERM');
    await new Promise((resolve) => collector.child.once('exit', resolve));
  }
  rmSync(dir, { recursive: true, force: true });
}
