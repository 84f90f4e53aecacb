/**
 * The first screen at a laptop's 1366×768 and a desktop's 1920×1080, in real Chromium against a real collector: the
 * header on one line with alerts firing in the nav, ten matrix rows and more without scrolling, cell text readable,
 * "Rows by" only on the views it acts on, one empty state on an empty What changed, the steps not final yet marked
 * in the trends. The fleet: fifteen client rows and two services whose instances advertise different sets (both fire
 * the skew rule), sent as the agent exports them; screenshots in test-artifacts/dashboard/first-screen/.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { type Json, MINUTE_NS, advertisedPoint, extensionPoint, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';
import { type Browser, type Watched, launchBrowser, ready, screenshot, watchedPage } from './helpers/browser.js';
import { REPLAY, SEARCH, TASKS } from './helpers/scenario.js';

const LONG_ID = 'com.example.enterprise/audit-trail-and-replay';
const CLIENTS = [
  'claude-desktop',
  'cursor',
  'vscode-copilot',
  'windsurf',
  'zed',
  'cline',
  'continue',
  'goose',
  'librechat',
  'open-webui',
  'raycast',
  'warp',
  'jetbrains-ai',
  'emacs-mcp',
];
/** The named clients' rows and the row of requests that named no client. */
const ROWS = CLIENTS.length + 1;
const SIZES = [
  { width: 1366, height: 768 },
  { width: 1920, height: 1080 },
] as const;

let collector: TestCollector;
let cleanup: () => Promise<void>;
let browser: Browser;
let watched: Watched;
let page: Page;
let emptyChanges: { notices: string[] } | undefined;

/** Every client's requests of one minute (two minutes ago), with each id in another state per client. */
function traffic(timeMs: number): Json {
  const at = { startNs: msToNs(timeMs) - MINUTE_NS, timeNs: msToNs(timeMs) };
  const requests: Json[] = [];
  const extensions: Json[] = [];
  const clients: (string | undefined)[] = [...CLIENTS, undefined];
  clients.forEach((client, index) => {
    const who = client === undefined ? {} : { client, version: `${1 + (index % 3)}.${index}.0` };
    const count = 200 - index * 10;
    requests.push(requestPoint({ ...who, count, ...at, ...(client === undefined ? { declaration: 'unknown' } : {}) }));
    // tasks: negotiated on every request, or on some; search: declared by the client alone; replay: offered by the server alone.
    const some = index % 2 === 0 ? count : Math.floor(count / 3);
    extensions.push(extensionPoint({ ...who, id: TASKS, clientDeclared: true, serverDeclared: true, count: some, ...at }));
    if (index % 3 === 0)
      extensions.push(extensionPoint({ ...who, id: SEARCH, clientDeclared: true, serverDeclared: false, count: Math.floor(count / 2), ...at }));
    if (index % 4 === 1) extensions.push(extensionPoint({ ...who, id: REPLAY, clientDeclared: false, serverDeclared: true, count, ...at }));
    if (index % 5 === 2) extensions.push(extensionPoint({ ...who, id: LONG_ID, clientDeclared: true, serverDeclared: true, count: 3, required: true, ...at }));
  });
  const advertised = (ids: string[]) => ids.map((id) => advertisedPoint({ id, fingerprint: 'f1', timeNs: at.timeNs }));
  return metricsRequest(
    { resource: { service: 'shop', instance: 'shop-a' }, requests, extensions, advertised: advertised([TASKS, REPLAY]) },
    { resource: { service: 'shop', instance: 'shop-b' }, advertised: advertised([TASKS]) },
    { resource: { service: 'docs', instance: 'docs-a' }, advertised: advertised([SEARCH]) },
    { resource: { service: 'docs', instance: 'docs-b' }, advertised: advertised([TASKS]) },
  );
}

async function open(search: string): Promise<void> {
  await page.goto(`${collector.url}/${search}`);
  await ready(page);
}

/** Geometry of the first screen, read in the page. */
async function firstScreen(): Promise<{ header: number; navLink: number; tops: number[]; fullRows: number; wrapWidth: number; tableWidth: number }> {
  return page.evaluate(() => {
    interface Box {
      getBoundingClientRect(): { top: number; bottom: number; height: number; width: number };
      children: ArrayLike<Box>;
      clientWidth: number;
    }
    const { document: doc, innerHeight } = globalThis as unknown as {
      document: { querySelector(selector: string): Box; querySelectorAll(selector: string): ArrayLike<Box> };
      innerHeight: number;
    };
    const header = doc.querySelector('body > header');
    const wrap = doc.querySelector('.grid-wrap');
    const bottom = Math.min(innerHeight, wrap.getBoundingClientRect().bottom);
    const rows = Array.from(doc.querySelectorAll('table.matrix tbody tr[data-row]'));
    return {
      header: header.getBoundingClientRect().height,
      navLink: doc.querySelector('nav a').getBoundingClientRect().height,
      tops: Array.from(header.children).map((child) => child.getBoundingClientRect().top),
      fullRows: rows.filter((row) => row.getBoundingClientRect().top >= 0 && row.getBoundingClientRect().bottom <= bottom + 0.5).length,
      wrapWidth: wrap.clientWidth,
      tableWidth: doc.querySelector('table.matrix').getBoundingClientRect().width,
    };
  });
}

beforeAll(async () => {
  const temp = await tempDir();
  cleanup = temp.cleanup;
  const rulesPath = join(temp.dir, 'rules.yaml');
  await writeFile(rulesPath, 'rules:\n  - { name: skew, kind: advertisement_skew, for: 0s }\n');
  collector = await startTestCollector(temp.dir, { rulesPath, alertIntervalMs: 3_600_000 });
  browser = await launchBrowser();
  watched = await watchedPage(browser.context, collector.url);
  page = watched.page;
  page.setDefaultTimeout(15_000);
  // Before any data: What changed on an empty collector.
  await open('?view=changes');
  emptyChanges = { notices: await page.locator('.view .notice').allInnerTexts() };
  const response = await postMetrics(collector.url, traffic(Math.floor((Date.now() - 120_000) / 60_000) * 60_000));
  if (response.status !== 200) throw new Error(`export: HTTP ${response.status} ${await response.text()}`);
  await collector.alerting.evaluate();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await collector?.close();
  await cleanup?.();
});

describe('the first screen', () => {
  it('an empty What changed says one thing: no data yet (not also that nothing changed)', () => {
    expect(emptyChanges?.notices).toHaveLength(1);
    expect(emptyChanges?.notices[0]).toMatch(/^No data yet\./);
    expect(emptyChanges?.notices[0]).not.toContain('Nothing changed');
  });

  it('at 1366×768 and 1920×1080, light and dark: the header is one line with "2 firing" in the nav, and 10+ matrix rows show whole; screenshots', async () => {
    for (const size of SIZES) {
      for (const scheme of ['light', 'dark'] as const) {
        await page.setViewportSize(size);
        await page.emulateMedia({ colorScheme: scheme });
        await open('');
        await page.locator('nav .nav-count').waitFor();
        expect((await page.locator('nav .nav-count').innerText()).trim()).toBe('2 firing');
        await expect(page.locator('table.matrix tbody tr[data-row]').count()).resolves.toBe(ROWS);
        const screen = await firstScreen();
        const where = `${size.width}×${size.height} ${scheme}`;
        // One line: the brand, the nav and the refresh controls side by side, the header no taller than a nav link and its padding.
        expect(screen.header, where).toBeLessThan(screen.navLink * 1.6);
        expect(Math.max(...screen.tops) - Math.min(...screen.tops), where).toBeLessThan(8);
        expect(screen.fullRows, where).toBeGreaterThanOrEqual(10);
        // The table takes the width it has.
        expect(screen.tableWidth, where).toBeGreaterThanOrEqual(screen.wrapWidth - 2);
        await screenshot(page, `first-screen/matrix-${size.width}x${size.height}-${scheme}`);
      }
    }
    expect(watched.errors).toEqual([]);
  });

  it('at 1920×1080 every text in a matrix cell is at least 12 px', async () => {
    await page.setViewportSize(SIZES[1]);
    await open('');
    const sizes = await page
      .locator('table.matrix td.cell, table.matrix td.cell *')
      .evaluateAll((elements) =>
        elements.map((element) =>
          Number.parseFloat((globalThis as unknown as { getComputedStyle(e: unknown): { fontSize: string } }).getComputedStyle(element).fontSize),
        ),
      );
    expect(sizes.length).toBeGreaterThan(ROWS * 4);
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(12);
  });

  it('a cell’s figure is its negotiated share in every state; the declared and advertised shares are in its tooltip', async () => {
    await page.setViewportSize(SIZES[0]);
    await open('');
    const cell = (client: string, ext: string) => page.locator(`td.cell[data-client="${client}"][data-ext="${ext}"]`);
    // claude-desktop (index 0) declares search on half its 200 requests, which no server offers: client-only, 0 % negotiated.
    await expect(cell('claude-desktop', SEARCH).getAttribute('class')).resolves.toContain('state-client');
    await expect(cell('claude-desktop', SEARCH).innerText()).resolves.toMatch(/^0 %\s*◐ client$/);
    // cursor (index 1, 190 requests): replay offered on every request, never declared: server-only, 0 %; tasks on 63 of 190.
    await expect(cell('cursor', REPLAY).innerText()).resolves.toMatch(/^0 %\s*◑ server$/);
    await expect(cell('cursor', TASKS).innerText()).resolves.toMatch(/^33 %\s*◒ partial$/);
    await cell('claude-desktop', SEARCH).hover();
    const tooltip = await page.locator('#cell-tooltip').innerText();
    expect(tooltip).toContain('negotiated: 0 of 200 requests (0.0 %)');
    expect(tooltip).toContain('client declared: 100 of 200 requests (50.0 %)');
  });

  it('"Rows by" shows on the matrix and the trends, not on Fleet, Alerts, What changed and the extension page', async () => {
    const shown: Record<string, boolean> = {};
    for (const view of ['', '?view=trends', '?view=fleet', '?view=alerts', '?view=changes', `?view=extension&ext=${encodeURIComponent(TASKS)}`]) {
      await open(view);
      shown[view] = await page.locator('#filter-group').isVisible();
    }
    expect(shown).toEqual({
      '': true,
      '?view=trends': true,
      '?view=fleet': false,
      '?view=alerts': false,
      '?view=changes': false,
      [`?view=extension&ext=${encodeURIComponent(TASKS)}`]: false,
    });
    // On the trends, only the groupings its clients chart follows are offered.
    await open('?view=trends');
    const offered = await page
      .locator('#filter-group option:not([disabled])')
      .evaluateAll((options) => options.map((option) => (option as unknown as { value: string }).value));
    expect(offered).toEqual(['client', 'client_version']);
  });

  it('rows by instance: "Filter instances" with no client example; rows by version: "(unknown client)@(unknown version)" whole', async () => {
    await open('?group=instance');
    await expect(page.locator('label[for="matrix-rows"]').innerText()).resolves.toBe('Filter instances');
    await expect(page.locator('#matrix-rows').getAttribute('placeholder')).resolves.toBe('');
    await open('?group=client_version');
    const label = page.locator('tbody tr[data-client="(unknown client)@(unknown version)"] th.client a');
    await expect(label.innerText()).resolves.toBe('(unknown client)@(unknown version)');
    const cut = await label.evaluate((element) => element.scrollWidth > element.clientWidth);
    expect(cut).toBe(false);
  });

  it('the trends mark the steps not final yet (from the API’s partialFrom), and no other', async () => {
    await open('?view=trends&range=15m');
    const answer = (await (await fetch(`${collector.url}/api/v1/trends/declarations?from=-15m`)).json()) as { times: string[]; partialFrom: string | null };
    // The step under way, and the one before it when it ended less than a minute ago: the last one or two.
    const partial = answer.times.length - answer.times.indexOf(answer.partialFrom ?? '');
    expect(answer.partialFrom).not.toBeNull();
    expect(partial === 1 || partial === 2).toBe(true);
    const figure = page.locator('figure.chart', { has: page.locator('canvas#chart-declarations') });
    await figure.locator('details.chart-data summary').click();
    const steps = await figure.locator('details.chart-data tbody th').allInnerTexts();
    const marked = steps.map((step) => step.endsWith(' (not final yet)'));
    expect(marked.filter(Boolean).length).toBeGreaterThanOrEqual(1);
    expect(marked.slice(-1)).toEqual([true]);
    expect(marked.indexOf(true)).toBe(marked.length - marked.filter(Boolean).length);
    await expect(figure.locator('.chart-summary').innerText()).resolves.toMatch(/Steps from \S+ are not final yet \(shaded\)/);
    await expect(figure.locator('canvas').getAttribute('aria-label')).resolves.toContain('are not final yet');
    expect(watched.errors).toEqual([]);
  });
});
