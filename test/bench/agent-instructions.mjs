// The agent's metrics-only cost on an MCP server (HTTP, or the in-memory stdio echo), counted in instructions instead of timed. valgrind's
// callgrind counts the instructions a process executes whatever else the machine is doing, where CPU time on this
// shared machine moves by 10 % from one minute to the next.
//   node test/bench/agent-instructions.mjs [entry|loopback|stdio] [--simulate] [--keep=DIR] [rounds=3] [warm-up] [measured] [concurrency=16]
// entry (the default): the server side alone, createMcpHandler().fetch called with Fetch API requests (as
// agent-http.mjs entry); warm-up 30,000, measured 16,000.
// loopback: the server behind node:http on loopback with a real client in the same process (as agent-http.mjs), so
// the count is the client's, the sockets' and the server's together, as a timed loopback run's CPU is; warm-up
// 20,000, measured 8,000 (a request counts about twice the entry's instructions and runs about twice as long under
// valgrind: a round takes about 15 minutes, 27 simulating).
// stdio: the in-memory stdio echo of compare-sentry.mjs and agent-interleaved.mjs (client in the process), with a
// third variant, the agent loaded and constructed but not enabled; warm-up 30,000, measured 16,000.
// --keep=DIR leaves each window's callgrind dump in DIR (`<variant>.<round>.out`), to compare function by function
// with callgrind_annotate.
// Node runs with --predictable --single-threaded (the optimizing compiler and the GC on the counted thread, fixed
// seeds) and without address randomization; both variants of a round run at once, as counts do not depend on load.
// The warm-up lets the JIT settle (traced with --trace-opt: optimizations all but stop after about 24,000
// requests). What still moves a count is the optimizing compiler: in either variant V8 recompiles a few functions
// every 8,000 requests or so (traced), and some windows of 4,000 requests counted 11 % more, nearly all of it in
// the compiler. So the default window is 16,000 requests, and the rounds' spread is printed.
// --simulate adds callgrind's cache and branch-predictor simulation (about three times as slow): what an instruction
// count misses of time is mostly memory and branches, so the misses per request and a cycle estimate from them
// show whether the agent's instructions cost more each than the server's.
// Needs valgrind (Debian package `valgrind`).
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { checkExact } from './lib/exactness.mjs';
import { HTTP_SETTINGS } from './lib/http-echo-worker.mjs';
import { median, percent } from './lib/paired-stats.mjs';
import { numericArgs } from './lib/smoke.mjs';

const argv = process.argv.slice(2);
const simulate = argv.includes('--simulate');
const keep = argv.find((arg) => arg.startsWith('--keep='))?.slice('--keep='.length);
const positional = argv.filter((arg) => !arg.startsWith('--'));
const MODES = ['entry', 'loopback', 'stdio'];
const mode = MODES.includes(positional[0]) ? positional.shift() : 'entry';
const [rounds, warmUp, measured, concurrency] = numericArgs(positional, [
  [3, 1],
  [mode === 'loopback' ? 20_000 : 30_000, 20],
  [mode === 'loopback' ? 8_000 : 16_000, 20],
  [16, 16],
]);
const variants = mode === 'stdio' ? ['bare', 'loaded', 'metrics'] : ['bare', 'metrics'];
const labels = { bare: 'uninstrumented', loaded: 'agent loaded, not enabled', metrics: 'agent, metrics only' };
const settings = { ...HTTP_SETTINGS, stdio: 'in-memory stdio wire, 2026-07-28 client in the same process' };
const SIMULATION = simulate ? ['--cache-sim=yes', '--branch-sim=yes', `--LL=${privateCache()}`] : [];
const worker =
  mode === 'stdio'
    ? (variant) => [
        fileURLToPath(new URL('./workers/inmemory-server.mjs', import.meta.url)),
        variant,
        String(warmUp),
        String(concurrency),
        `--counted=${measured}`,
      ]
    : (variant) => [
        fileURLToPath(new URL('./workers/http-counted.mjs', import.meta.url)),
        mode,
        variant,
        String(warmUp),
        String(measured),
        String(concurrency),
      ];
const NODE_FLAGS = ['--predictable', '--single-threaded', '--random-seed=1', '--hash-seed=1'];
// Far longer than a worker takes (entry: about 5 minutes, 10 to 20 simulating; loopback: about 15, 27 simulating):
// only one that hangs meets it.
const RUN_TIMEOUT_MS = (simulate ? 90 : 30) * (mode === 'entry' ? 1 : 3) * 60_000;

/**
 * The core's own L2 as `size,associativity,line` (getconf), simulated as the last level: the L3 a VM reports is
 * shared with the host's other guests, so how much of it the server has is not known.
 */
function privateCache() {
  const value = (name) => Number(execFileSync('getconf', [name], { encoding: 'utf8' }).trim());
  const [size, associativity, line] = ['LEVEL2_CACHE_SIZE', 'LEVEL2_CACHE_ASSOC', 'LEVEL2_CACHE_LINESIZE'].map(value);
  if (!(size > 0 && associativity > 0 && line > 0))
    throw new Error(`getconf gives no L2 cache geometry (${size}, ${associativity}, ${line}): run without --simulate`);
  return `${size},${associativity},${line}`;
}

/** Runs a command to completion; rejects with its output when it fails. */
function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', (error) => reject(new Error(`${command}: ${error.message} (is valgrind installed? Debian package valgrind)`)));
    child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${output}`))));
  });
}

/** One variant in a fresh process: the instructions its measured window executed, and its report. */
async function countWindow(variant, dir, round) {
  const child = spawn(
    'setarch',
    [
      '-R',
      'valgrind',
      '--tool=callgrind',
      '--instr-atstart=no',
      ...SIMULATION,
      `--callgrind-out-file=${join(dir, `${variant}.%p`)}`,
      process.execPath,
      ...NODE_FLAGS,
      ...worker(variant),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  const lines = createInterface({ input: child.stderr });
  lines.on('line', (line) => (stderr += `${line}\n`));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  const exited = new Promise((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`setarch/valgrind: ${error.message} (is valgrind installed? Debian package valgrind)`)));
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`the ${variant} worker exited ${code ?? signal}:\n${stderr.slice(-2000)}`)),
    );
  });
  exited.catch(() => {}).finally(() => clearTimeout(timer));
  // The pid in the worker's next `<word> <pid>` line; a worker that exits first fails the wait.
  const said = (word) =>
    new Promise((resolve, reject) => {
      const onLine = (line) => {
        const [first, pid] = line.split(' ');
        if (first !== word) return;
        lines.off('line', onLine);
        resolve(Number(pid));
      };
      lines.on('line', onLine);
      exited.then(() => reject(new Error(`the ${variant} worker exited before saying ${word}`)), reject);
    });

  const pid = await said('ready');
  await run('callgrind_control', ['--instr=on', String(pid)]);
  process.kill(pid, 'SIGUSR2');
  await said('done');
  await run('callgrind_control', ['--dump=window', String(pid)]);
  process.kill(pid, 'SIGUSR2');
  await exited;
  const dumpFile = join(dir, `${variant}.${pid}.1`);
  const dump = readFileSync(dumpFile, 'utf8');
  if (keep !== undefined) copyFileSync(dumpFile, join(keep, `${variant}.${round + 1}.out`));
  const names = /^events:\s+(.+)$/m.exec(dump);
  const totals = /^(?:summary|totals):\s+(.+)$/m.exec(dump);
  if (names === null || totals === null) throw new Error(`no event totals in the ${variant} worker's callgrind dump`);
  const values = totals[1].trim().split(/\s+/).map(Number);
  const events = Object.fromEntries(
    names[1]
      .trim()
      .split(/\s+/)
      .map((name, index) => [name, values[index] ?? 0]),
  );
  const caches = [...dump.matchAll(/^desc: (I1|D1|LL) cache:\s+(.+)$/gm)].map(([, name, config]) => `${name} ${config.trim()}`);
  return { instructions: events.Ir, events, caches, report: JSON.parse(stdout) };
}

/**
 * Per request, from a window's simulated events: misses in the first-level caches (I1mr + D1mr + D1mw), in the
 * last level (ILmr + DLmr + DLmw), mispredicted branches (Bcm + Bim), and KCachegrind's cycle estimate from them,
 * Ir + 10·branch + 10·L1 + 100·LL misses: a rough weight, but the same for both variants.
 */
function perRequest(events) {
  const l1 = events.I1mr + events.D1mr + events.D1mw;
  const ll = events.ILmr + events.DLmr + events.DLmw;
  const branches = events.Bcm + events.Bim;
  return { l1: l1 / measured, ll: ll / measured, branches: branches / measured, cycles: (events.Ir + 10 * branches + 10 * l1 + 100 * ll) / measured };
}

const dir = mkdtempSync(join(tmpdir(), 'extscope-instructions-'));
if (keep !== undefined) mkdirSync(keep, { recursive: true });
const rows = [];
try {
  for (let round = 0; round < rounds; round++) {
    const counts = {};
    await Promise.all(variants.map(async (variant) => (counts[variant] = await countWindow(variant, dir, round))));
    // The stdio worker's client counts every request it sends, the connect's discover probe included.
    const { counted, sent, requestsSent } = counts.metrics.report;
    checkExact(`round ${round + 1}: requests the agent counted of those sent`, counted, requestsSent ?? sent);
    rows.push({
      perRequest: Object.fromEntries(variants.map((variant) => [variant, counts[variant].instructions / measured])),
      simulated: simulate ? Object.fromEntries(variants.map((variant) => [variant, perRequest(counts[variant].events)])) : undefined,
      caches: counts.bare.caches,
      counted,
      sent: requestsSent ?? sent,
    });
    process.stderr.write(
      `round ${round + 1}/${rounds}: ${variants.map((variant) => `${variant} ${(rows.at(-1).perRequest[variant] / 1000).toFixed(1)}k`).join(', ')} instructions per request\n`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const thousands = (value) => `${(value / 1000).toFixed(1)}k`;
const spread = (values) =>
  `${thousands(Math.min(...values))}..${thousands(Math.max(...values))} (${((Math.max(...values) / Math.min(...values) - 1) * 100).toFixed(2)} %)`;
const others = variants.filter((variant) => variant !== 'bare');
console.log(
  `agent instructions per request: ${rounds} rounds × ${measured} tools/call per variant counted by callgrind (after ${warmUp} to warm up), ${concurrency} in flight, ${settings[mode]}, Node ${process.version} ${NODE_FLAGS.join(' ')}`,
);
console.log('');
console.log(
  `| round | ${variants.map((variant) => `${labels[variant]}, instructions/request${variant === 'bare' ? '' : ' | vs uninstrumented'}`).join(' | ')} |`,
);
console.log(`| ---: | ${variants.map((variant) => (variant === 'bare' ? '---:' : '---: | ---:')).join(' | ')} |`);
rows.forEach((row, index) =>
  console.log(
    `| ${index + 1} | ${variants.map((variant) => (variant === 'bare' ? thousands(row.perRequest.bare) : `${thousands(row.perRequest[variant])} | ${percent(row.perRequest[variant] / row.perRequest.bare)}`)).join(' | ')} |`,
  ),
);
const medianOf = (variant) => median(rows.map((row) => row.perRequest[variant]));
const versus = (variant) => {
  const ratios = rows.map((row) => row.perRequest[variant] / row.perRequest.bare);
  const extra = median(rows.map((row) => row.perRequest[variant] - row.perRequest.bare));
  return `${percent(median(ratios))} (${thousands(extra)} per request; rounds ${percent(Math.min(...ratios))}..${percent(Math.max(...ratios))})`;
};
console.log(
  `| median | ${variants.map((variant) => (variant === 'bare' ? thousands(medianOf('bare')) : `${thousands(medianOf(variant))} | ${versus(variant)}`)).join(' | ')} |`,
);
console.log('');
console.log(`spread between rounds: ${variants.map((variant) => `${labels[variant]} ${spread(rows.map((row) => row.perRequest[variant]))}`).join(', ')}`);
if (simulate) {
  const pair = (row, variant, key) =>
    `${row.simulated.bare[key].toFixed(0)} → ${row.simulated[variant][key].toFixed(0)} (${percent(row.simulated[variant][key] / row.simulated.bare[key])})`;
  console.log('');
  console.log(
    `simulated caches and branch predictor (callgrind --cache-sim=yes --branch-sim=yes; ${rows[0].caches.join(', ')}, the last level being the core's own L2), per request, uninstrumented → variant:`,
  );
  console.log('');
  console.log('| round | variant | estimated cycles | vs uninstrumented | L1 misses | last-level misses | mispredicted branches |');
  console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: |');
  rows.forEach((row, index) => {
    for (const variant of others) {
      console.log(
        `| ${index + 1} | ${labels[variant]} | ${thousands(row.simulated.bare.cycles)} → ${thousands(row.simulated[variant].cycles)} | ${percent(row.simulated[variant].cycles / row.simulated.bare.cycles)} | ${pair(row, variant, 'l1')} | ${pair(row, variant, 'll')} | ${pair(row, variant, 'branches')} |`,
      );
    }
  });
  for (const variant of others)
    console.log(`| median | ${labels[variant]} | | ${percent(median(rows.map((row) => row.simulated[variant].cycles / row.simulated.bare.cycles)))} | | | |`);
}
console.log(`the agent counted ${rows.at(-1).counted} of the ${rows.at(-1).sent} requests (last round)`);
