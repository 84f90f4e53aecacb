import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { type Browser, type Watched, launchBrowser, ready, screenshot, watchedPage } from './helpers/browser.js';
import { EVIL_CLIENT, EVIL_SERVICE, REPLAY, SEARCH, TASKS, feedHistory, keepInstancesRunning, runFleet } from './helpers/scenario.js';

/**
 * The dashboard in real headless Chromium, against a real collector fed by real instrumented MCP servers and
 * real SDK clients (see helpers/scenario.ts for who declares and advertises what).
 */

let collector: TestCollector;
let cleanup: () => Promise<void>;
let browser: Browser;
let watched: Watched;
let page: Page;
let negotiated: Awaited<ReturnType<typeof runFleet>>;

const cell = (client: string, ext: string) => page.locator(`td.cell[data-client="${client.replaceAll('"', '\\"')}"][data-ext="${ext}"]`);
const row = (client: string) => page.locator(`tbody tr[data-client="${client.replaceAll('"', '\\"')}"]`);
const query = () => new URL(page.url()).searchParams;

async function open(search: string): Promise<void> {
  await page.goto(`${collector.url}/${search}`);
  await ready(page);
}

/** Runs an in-page navigation (a click, a key) and waits for the view to render its data again. */
async function andRender(action: () => Promise<unknown>): Promise<void> {
  await page.evaluate('delete document.body.dataset.ready');
  await action();
  await ready(page);
}

let stopInstances: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const temp = await tempDir();
  cleanup = temp.cleanup;
  // Points 30 h old are fed by hand for "what changed": remember applied points for longer than that.
  collector = await startTestCollector(temp.dir, { retention: { dedupHours: 72 } });
  negotiated = await runFleet(collector.url);
  await feedHistory(collector.url);
  stopInstances = await keepInstancesRunning(collector.url);
  // Every export has arrived once the matrix counts every request the clients sent (7+2+2+2+1+1+1+…).
  const expected = { alpha: 7, beta: 2, gamma: 2, delta: 1, [EVIL_CLIENT]: 2, '(unknown client)': 2 };
  const deadline = Date.now() + 20_000;
  for (;;) {
    const body = (await (await fetch(`${collector.url}/api/v1/matrix`)).json()) as { rows: { client: string; requests: number }[] };
    const seen = Object.fromEntries(body.rows.map((entry) => [entry.client, entry.requests]));
    if (Object.entries(expected).every(([client, n]) => seen[client] === n)) break;
    if (Date.now() > deadline) throw new Error(`the exports did not all arrive: ${JSON.stringify(seen)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  browser = await launchBrowser();
  watched = await watchedPage(browser.context, collector.url);
  page = watched.page;
  page.setDefaultTimeout(10_000);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopInstances?.();
  await collector?.close();
  await cleanup?.();
});

describe('the dashboard, end to end in Chromium', () => {
  it('the clients negotiated what they were meant to', () => {
    expect(negotiated).toEqual({ alpha: '2026-07-28', beta: expect.stringMatching(/^2025-/), gamma: '2026-07-28' });
  });

  it('the matrix shows each cell’s state by symbol and text, its share, and its counts on hover', async () => {
    await open('');
    await expect(page.title()).resolves.toBe('Support matrix · extscope');
    // alpha negotiated tasks on 6 of its 7 requests: partial, by its symbol, word, hatching and shade.
    await expect(cell('alpha', TASKS).getAttribute('class')).resolves.toContain('state-partial');
    await expect(cell('alpha', TASKS).innerText()).resolves.toMatch(/86 %\s*◒ partial/);
    await expect(
      cell('alpha', TASKS).evaluate(
        (element) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundImage: string } }).getComputedStyle(element).backgroundImage,
      ),
    ).resolves.toContain('repeating-linear-gradient');
    await expect(cell('alpha', TASKS).getAttribute('data-share')).resolves.toBe(String(6 / 7));
    // Its -32021 answer naming replay is counted in that cell.
    await expect(cell('alpha', REPLAY).innerText()).resolves.toContain('×1');
    await expect(cell('alpha', REPLAY).getAttribute('aria-label')).resolves.toContain('1 answered -32021 naming it');
    await expect(cell('gamma', SEARCH).getAttribute('class')).resolves.toContain('state-client');
    // A cell's figure is its negotiated share whatever its state: gamma declared search on every request, none negotiated it.
    await expect(cell('gamma', SEARCH).innerText()).resolves.toMatch(/^0 %\s*◐ client$/);
    await expect(cell('beta', TASKS).getAttribute('class')).resolves.toContain('state-server');
    await expect(cell('beta', SEARCH).getAttribute('class')).resolves.toContain('state-negotiated');
    await expect(cell('beta', SEARCH).innerText()).resolves.toMatch(/100 %\s*● all/);
    await expect(cell('alpha', REPLAY).getAttribute('class')).resolves.toContain('state-neither');
    await expect(cell('(unknown client)', TASKS).innerText()).resolves.toMatch(/50 %/);
    // Every cell also carries its state in words for screen readers.
    await expect(cell('gamma', SEARCH).getAttribute('aria-label')).resolves.toBe(
      `gamma, ${SEARCH}: client declares, server lacks, negotiated: 0 % of requests`,
    );

    await cell('alpha', TASKS).hover();
    const tooltip = page.locator('#cell-tooltip');
    await expect(tooltip.isVisible()).resolves.toBe(true);
    const text = await tooltip.innerText();
    expect(text).toContain('negotiated: 6 of 7 requests (85.7 %)');
    expect(text).toContain('client declared: 6 of 7 requests');
    expect(text).toContain('server advertised: 7 of 7 requests');
    await screenshot(page, 'matrix-hover');
  });

  it('each row shows its declaration states, so no data never reads as unsupported', async () => {
    await expect(row('alpha').locator('.declarations').innerText()).resolves.toBe('declared 6 · none 1 · unknown 0');
    await expect(row('beta').locator('.declarations').innerText()).resolves.toBe('declared 2 · none 0 · unknown 0');
    await expect(row('(unknown client)').locator('.declarations').innerText()).resolves.toBe('declared 1 · none 0 · unknown 1');
    await screenshot(page, 'matrix');
  });

  it('the (unknown client) row says, on its label, what it holds', async () => {
    await expect(row('(unknown client)').locator('.client-link').getAttribute('title')).resolves.toContain('2025-era clients on stateless HTTP');
    await expect(row('alpha').locator('.client-link').getAttribute('title')).resolves.toBe('alpha');
  });

  it('renders hostile names as text: nothing runs, no element is created', async () => {
    await expect(row(EVIL_CLIENT).locator('th a').innerText()).resolves.toBe(EVIL_CLIENT);
    await expect(page.locator('img').count()).resolves.toBe(0);
    await andRender(() => page.locator('nav a', { hasText: 'Fleet' }).click());
    await expect(page.getByRole('heading', { name: EVIL_SERVICE, exact: true }).count()).resolves.toBe(1);
    await expect(page.locator('#filter-service option', { hasText: EVIL_SERVICE }).count()).resolves.toBe(1);
    await expect(page.locator('main script, img').count()).resolves.toBe(0);
    expect(watched.dialogs).toEqual([]);
  });

  it('the fleet view names the odd one out (shop-b lacks search) and does not flag shop-a; the 1 vs 1 tie is shown as a split', async () => {
    expect(query().get('view')).toBe('fleet');
    const shop = page.locator('section.service', { has: page.getByRole('heading', { name: /^shop/ }) });
    await expect(shop.locator('h3').innerText()).resolves.toContain('drift');
    await expect(shop.locator('tr.drift').count()).resolves.toBe(1);
    const shopB = shop.locator('tbody tr', { hasText: 'shop-b' });
    await expect(shopB.getAttribute('class')).resolves.toBe('drift');
    await expect(shopB.locator('.badge-drift').allInnerTexts()).resolves.toEqual([`lacks ${SEARCH}`]);
    const shopA = shop.locator('tbody tr', { hasText: 'shop-a' });
    await expect(shopA.getAttribute('class')).resolves.toBe('');
    await expect(shopA.locator('.badge-drift').count()).resolves.toBe(0);
    await expect(shopA.innerText()).resolves.not.toMatch(/lacks|differ/);
    await expect(shop.locator('.summary').innerText()).resolves.toContain('1 instance differs from the rest · no majority: the 2 live instances are split');
    await expect(shopB.locator('td.adv-yes').count()).resolves.toBe(1);
    await expect(shop.locator('tbody tr', { hasText: 'shop-a' }).locator('td.adv-yes').count()).resolves.toBe(2);
    await expect(shop.locator('thead').innerText()).resolves.toContain(SEARCH);
    const anon = page.locator('section.service', { has: page.getByRole('heading', { name: EVIL_SERVICE }) });
    await expect(anon.innerText()).resolves.toContain('✓ consistent');
    await expect(shop.innerText()).resolves.toContain('fixture-dashboard@3.1.0');
    await screenshot(page, 'fleet');
  });

  it('filters change the URL and the data; a reload restores the view; back and forward work', async () => {
    await open('');
    await expect(row('(unknown client)').count()).resolves.toBe(1);
    await andRender(() => page.selectOption('#filter-service', 'shop'));
    expect(query().get('service')).toBe('shop');
    await expect(row('(unknown client)').count()).resolves.toBe(0);
    await expect(row('alpha').count()).resolves.toBe(1);
    await andRender(() => page.fill('#matrix-rows', 'gam'));
    expect(query().get('rows')).toBe('gam');
    await expect(page.locator('tbody tr[data-client]').count()).resolves.toBe(1);
    await andRender(() => page.fill('#matrix-cols', 'search'));
    await expect(page.locator('thead th.ext').count()).resolves.toBe(1);

    await open(`?${query().toString()}`);
    await expect(page.inputValue('#matrix-rows')).resolves.toBe('gam');
    await expect(page.inputValue('#filter-service')).resolves.toBe('shop');
    await expect(page.locator('tbody tr[data-client]').count()).resolves.toBe(1);
    await expect(page.locator('thead th.ext').count()).resolves.toBe(1);

    await andRender(() => page.goBack());
    expect(query().get('service')).toBeNull();
    await expect(page.inputValue('#filter-service')).resolves.toBe('');
    await expect(row('(unknown client)').count()).resolves.toBe(1);
    await andRender(() => page.goForward());
    expect(query().get('service')).toBe('shop');
    await expect(page.locator('tbody tr[data-client]').count()).resolves.toBe(1);

    await andRender(() => page.selectOption('#filter-range', '1h'));
    expect(query().get('range')).toBe('1h');
    await expect(page.locator('.summary').first().innerText()).resolves.toContain('last hour');

    // A custom range: from/to in the URL, absolute times in the API call.
    await page.selectOption('#filter-range', 'custom');
    const from = new Date(Date.now() - 2 * 3_600_000);
    const local = (date: Date): string => new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await page.fill('#filter-from', local(from));
    await page.fill('#filter-to', local(new Date(Date.now() + 3_600_000)));
    await andRender(() => page.locator('.custom-range button', { hasText: 'Apply' }).click());
    expect(query().get('range')).toBe('custom');
    expect(Date.parse(query().get('from') ?? '')).toBe(Math.floor(from.getTime() / 60_000) * 60_000);
    await expect(row('gamma').count()).resolves.toBe(1);
    await open(`?${query().toString()}`);
    await expect(page.inputValue('#filter-range')).resolves.toBe('custom');
    await expect(page.inputValue('#filter-from')).resolves.toBe(local(from));
  });

  it('refreshes on its own, shows when it last did, and can be paused', async () => {
    await open('');
    await expect(page.locator('.updated').innerText()).resolves.toMatch(/^Last updated \d/);
    await andRender(() => page.click('#pause'));
    expect(query().get('paused')).toBe('1');
    await expect(page.locator('#pause').innerText()).resolves.toBe('Resume auto-refresh');
    await expect(page.locator('#pause').getAttribute('aria-pressed')).resolves.toBe('true');
    await expect(page.locator('.updated').innerText()).resolves.toContain('(auto-refresh paused)');
    await andRender(() => page.click('#pause'));
    expect(query().get('paused')).toBeNull();
  });

  it('sorts by any column', async () => {
    await open('');
    await andRender(() => page.locator(`button.sort[data-sort="${TASKS}"]`).click());
    expect(query().get('sort')).toBe(TASKS);
    // Negotiated first, by share: the hostile client (2 of 2) and delta (its initialize, 1 of 1), alpha (6 of 7), the
    // unknown row (1 of 2); then the rest.
    const order = await page.locator('tbody tr[data-client]').evaluateAll((rows) => rows.map((element) => element.getAttribute('data-client')));
    expect(order.slice(0, 4)).toEqual([EVIL_CLIENT, 'delta', 'alpha', '(unknown client)']);
    await expect(page.locator(`th[aria-sort="descending"] button[data-sort="${TASKS}"]`).count()).resolves.toBe(1);
    await andRender(() => page.locator('button.sort[data-sort="client"]').click());
    const byName = await page.locator('tbody tr[data-client]').evaluateAll((rows) => rows.map((element) => element.getAttribute('data-client')));
    expect(byName).toEqual([...byName].sort());
  });

  it('a keyboard-only pass reaches a cell’s counts, moves with the arrows, and opens its example requests', async () => {
    await open('');
    let onCell = false;
    for (let presses = 0; presses < 80 && !onCell; presses++) {
      await page.keyboard.press('Tab');
      onCell = (await page.evaluate('document.activeElement !== null && document.activeElement.matches("td.cell")')) as boolean;
    }
    expect(onCell).toBe(true);
    const tooltip = page.locator('#cell-tooltip');
    await expect(tooltip.isVisible()).resolves.toBe(true);
    await expect(tooltip.innerText()).resolves.toMatch(/negotiated: \d+ of \d+ requests/);
    // The first row is alpha (most requests), the first column com.example/replay; go right to tasks.
    await page.keyboard.press('End');
    await expect(page.evaluate('document.activeElement.dataset.ext')).resolves.toBe(TASKS);
    await expect(page.evaluate('document.activeElement.dataset.client')).resolves.toBe('alpha');
    await expect(tooltip.innerText()).resolves.toContain('negotiated: 6 of 7 requests');
    await screenshot(page, 'matrix-keyboard');
    await andRender(() => page.keyboard.press('Enter'));
    expect(query().get('cell.client')).toBe('alpha');
    expect(query().get('cell.ext')).toBe(TASKS);
    // The keyboard lands on the example requests it asked for.
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('drill-title');
    const examples = page.locator('table.examples tbody tr');
    await expect(examples.count()).resolves.toBeGreaterThan(0);
    const first = await examples.first().innerText();
    expect(first).toMatch(/tools\/call|server\/discover|com\.example\/replayable/);
    expect(first).toMatch(/[0-9a-f]{32}/);
    await page.locator('#drill-title').scrollIntoViewIfNeeded();
    await screenshot(page, 'drilldown');
  });

  it('exports the matrix as CSV, JSON and a Markdown table in the shape of the official support matrix', async () => {
    await open('');
    const save = async (label: string): Promise<string> => {
      const [download] = await Promise.all([page.waitForEvent('download'), page.locator('.exports button', { hasText: label }).click()]);
      return readFile((await download.path()) ?? '', 'utf8');
    };
    const csv = await save('CSV');
    expect(csv.split('\r\n')[0]).toContain(`${TASKS} negotiated`);
    // The collector's one CSV writer: requests, requests no server saw, declaration states, then per id its state,
    // negotiated share (the same as the cell's) and counts.
    expect(csv).toMatch(/^alpha,alpha,,7,0,0,1,6,/m);
    expect(csv.split('\r\n')[0]).toContain(`${TASKS} state,${TASKS} negotiated_share`);
    expect(csv).toMatch(new RegExp(`^alpha,.*,partial,${(6 / 7).toFixed(6)},`, 'm'));
    const json = JSON.parse(await save('JSON')) as { rows: { client: string; extensions: { id: string; state: string }[] }[] };
    expect(json.rows.find((entry) => entry.client === 'gamma')?.extensions.find((entry) => entry.id === SEARCH)?.state).toBe('client');
    const markdown = await save('Markdown');
    const lines = markdown.split('\n');
    expect(lines[0]).toBe(`| Client | \`${REPLAY}\` | \`${SEARCH}\` | \`${TASKS}\` |`);
    expect(lines).toContain('| alpha¹ | ❌ | ❌ | ✅ |');
    expect(lines).toContain('| gamma¹ | ❌ | ❌ | ❌ |');
    expect(markdown).toContain('com\\.evil/\\<img src=x onerror=alert(1)\\>¹');
    expect(markdown).toMatch(/¹ Measured by extscope from \S+ to \S+ \(all services\), 16 requests\./);
    expect(markdown).toContain('alpha: 7');
    await page.selectOption('#markdown-meaning', 'declared');
    expect((await save('Markdown')).split('\n')).toContain('| gamma¹ | ❌ | ✅ | ❌ |');
  });

  it('what changed compares two equal adjacent periods ending now, the client-version regression first, then a share that moved; an instance that started advertising an id with its build', async () => {
    await open('?view=changes');
    const rows = page.locator('.moved-list tbody tr');
    // alpha 0.9.0 declared search 30 h ago; alpha 1.0.0 declares it on none of its 7 requests: first.
    await expect(rows.first().getAttribute('data-kind')).resolves.toBe('stopped_declaring');
    await expect(rows.first().getAttribute('data-client')).resolves.toBe('alpha@1.0.0');
    await expect(rows.first().getAttribute('data-ext')).resolves.toBe(SEARCH);
    await expect(rows.first().innerText()).resolves.toMatch(/stopped declaring \(alpha@0\.9\.0 did\)\s+7/);
    const moved = page.locator(`.moved-list tr[data-kind="share_moved"][data-client="alpha@1.0.0"][data-ext="${TASKS}"]`);
    await expect(moved.innerText()).resolves.toContain('▲ +66 points (20 % → 86 %)');
    // The periods: equal, adjacent, the later one ending now.
    const times = await page
      .locator('.changes .summary time')
      .evaluateAll((elements) => elements.map((element) => Date.parse(element.getAttribute('datetime') ?? '')));
    expect(times).toHaveLength(4);
    const [beforeFrom = 0, beforeTo = 0, afterFrom = 0, afterTo = 0] = times;
    expect(beforeTo).toBe(afterFrom);
    expect(Math.abs(beforeTo - beforeFrom - (afterTo - afterFrom))).toBeLessThan(60_000);
    expect(afterTo).toBeLessThanOrEqual(Date.now());
    const advertising = page.locator('.advertising-changes');
    await expect(advertising.innerText()).resolves.toMatch(/started advertising\s+com\.example\/search\s+shop\s+fixture-dashboard@3\.1\.0 on \S+\s+shop-a/);
    await screenshot(page, 'changes');
    await andRender(async () => {
      await page.fill('#threshold', '70');
      await page.press('#threshold', 'Enter');
    });
    expect(query().get('threshold')).toBe('70');
    await expect(moved.count()).resolves.toBe(0);
  });

  it('the extension page: who declares it, who advertises it, its share over time, the -32021s naming it', async () => {
    await open(`?view=extension&ext=${encodeURIComponent(SEARCH)}`);
    const text = await page.locator('main').innerText();
    expect(text).toMatch(/Declared by clients\s+Client\s+Requests\s+Declared it\s+Negotiated\s+beta@2\.0\.0/);
    expect(text).toContain('gamma@3.0.0');
    expect(text).toMatch(/Advertised by instances[\s\S]*shop-a/);
    expect(text).not.toMatch(/Advertised by instances[\s\S]*shop-b[\s\S]*Lacked by instances/);
    // The instance that lacks it is listed beside those that advertise it; shop-a is not.
    const lacked = page.locator('section', { has: page.getByRole('heading', { name: 'Lacked by instances' }) });
    await expect(lacked.locator('tbody th').allInnerTexts()).resolves.toEqual([`shop-b lacks ${SEARCH}`]);
    await expect(lacked.innerText()).resolves.toContain('1 of 2 live instances (a split: no majority)');
    await expect(page.locator('#chart-ext-share').count()).resolves.toBe(1);
    await screenshot(page, 'extension');
    await open(`?view=extension&ext=${encodeURIComponent(REPLAY)}`);
    const replay = await page.locator('main').innerText();
    expect(replay).toContain('named by 1 -32021 answer.');
    expect(replay).toMatch(/Client\s+-32021 answers\s+alpha@1\.0\.0\s+1/);
  });

  it('trends: four charts, each with its figures in words and as a table', async () => {
    await open('?view=trends');
    for (const id of ['chart-share', 'chart-declarations', 'chart-required', 'chart-clients']) {
      await expect(page.locator(`canvas#${id}`).count()).resolves.toBe(1);
    }
    // chart.js has drawn (its own chunk, loaded on demand): the canvas got its size.
    await page.waitForFunction('document.querySelector("#chart-clients").width > 0 && document.querySelector("#chart-share").width > 0');
    const text = await page.locator('main').innerText();
    expect(text).toContain('1 answer; named: com.example/replay 1.');
    expect(text).toContain('declared 14, none 1, unknown 1 requests.');
    await page.waitForTimeout(300);
    await screenshot(page, 'trends');
  });

  it('alerts: the built-in rules, with the sections for active and resolved alerts', async () => {
    await open('?view=alerts');
    await expect(page.locator('main p.summary').innerText()).resolves.toMatch(/^7 rules \(the built-in rules\), evaluated every 30 s; last evaluation /);
    await expect(page.getByRole('heading', { name: /^Firing and pending \(\d+\)$/ }).count()).resolves.toBe(1);
    await expect(page.getByRole('heading', { name: /^Resolved \(\d+\)$/ }).count()).resolves.toBe(1);
    await screenshot(page, 'alerts');
  });

  it('dark mode follows prefers-color-scheme', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await open('');
    const background = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(background).toBe('rgb(21, 23, 26)');
    await screenshot(page, 'matrix-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('loaded nothing from elsewhere, broke no CSP rule, raised no error and opened no dialog', () => {
    expect(watched.foreign).toEqual([]);
    expect(watched.errors).toEqual([]);
    expect(watched.dialogs).toEqual([]);
  });
});
