/**
 * Every view of the dashboard, at the two common laptop and desktop sizes, light and dark, in real Chromium against a
 * real collector fed by real instrumented servers: nothing wider than the window, charts with dated, titled axes, no
 * answer the page reads reaching past now; a screenshot of each in test-artifacts/dashboard/views/.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { type Browser, type Watched, launchBrowser, ready, screenshot, watchedPage } from './helpers/browser.js';
import { SEARCH, feedHistory, keepInstancesRunning, runFleet } from './helpers/scenario.js';

const VIEWS: { name: string; search: string; charts: string[] }[] = [
  { name: 'matrix', search: '', charts: [] },
  { name: 'fleet', search: '?view=fleet', charts: [] },
  { name: 'extension', search: `?view=extension&ext=${encodeURIComponent(SEARCH)}`, charts: ['chart-ext-share'] },
  { name: 'trends', search: '?view=trends', charts: ['chart-share', 'chart-declarations', 'chart-required', 'chart-clients'] },
  { name: 'changes', search: '?view=changes', charts: [] },
  { name: 'alerts', search: '?view=alerts', charts: [] },
];
const SIZES = [
  { width: 1366, height: 768 },
  { width: 1920, height: 1080 },
];
const SCHEMES = ['light', 'dark'] as const;

let collector: TestCollector;
let cleanup: () => Promise<void>;
let browser: Browser;
let watched: Watched;
let page: Page;
/** Times in the JSON answers of /api/v1/ the page read, each with the moment it was answered. */
const answeredTimes: { url: string; key: string; value: string; answeredAt: number }[] = [];

/** Every `to`, `times[]` and `t` in an answer: the ends of ranges and the starts of steps. */
function collectTimes(value: unknown, url: string, answeredAt: number, key = ''): void {
  if (Array.isArray(value)) {
    for (const item of value) collectTimes(item, url, answeredAt, key);
    return;
  }
  if (typeof value === 'string' && (key === 'to' || key === 'times' || key === 't')) answeredTimes.push({ url, key, value, answeredAt });
  if (typeof value !== 'object' || value === null) return;
  for (const [name, inner] of Object.entries(value)) collectTimes(inner, url, answeredAt, name);
}

let stopInstances: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const temp = await tempDir();
  cleanup = temp.cleanup;
  collector = await startTestCollector(temp.dir, { retention: { dedupHours: 72 } });
  await runFleet(collector.url);
  await feedHistory(collector.url);
  stopInstances = await keepInstancesRunning(collector.url);
  // The fleet's exports have arrived once its six client rows are in the matrix.
  for (const deadline = Date.now() + 20_000; ;) {
    const { rows } = (await (await fetch(`${collector.url}/api/v1/matrix`)).json()) as { rows: unknown[] };
    if (rows.length >= 6) break;
    if (Date.now() > deadline) throw new Error(`the fleet's exports did not arrive: ${rows.length} rows`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  browser = await launchBrowser();
  watched = await watchedPage(browser.context, collector.url);
  page = watched.page;
  page.setDefaultTimeout(15_000);
  page.on('response', (response) => {
    if (!response.url().includes('/api/v1/') || !(response.headers()['content-type'] ?? '').includes('application/json')) return;
    const answeredAt = Date.now();
    void response.json().then(
      (body: unknown) => collectTimes(body, response.url(), answeredAt),
      () => undefined,
    );
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stopInstances?.();
  await collector?.close();
  await cleanup?.();
});

describe('every view at 1366×768 and 1920×1080, light and dark', () => {
  for (const view of VIEWS) {
    it(`${view.name}: no horizontal overflow, charts with dated and titled axes; screenshots`, async () => {
      for (const size of SIZES) {
        for (const scheme of SCHEMES) {
          await page.setViewportSize(size);
          await page.emulateMedia({ colorScheme: scheme });
          await page.goto(`${collector.url}/${view.search}`);
          await ready(page);
          for (const chart of view.charts) await page.locator(`canvas#${chart}`).evaluate((canvas: { width: number }) => canvas.width > 0);
          const overflow = await page.evaluate(() => {
            const { document, innerWidth } = globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number };
            return document.documentElement.scrollWidth - innerWidth;
          });
          expect(overflow, `${view.name} at ${size.width}×${size.height} ${scheme}`).toBeLessThanOrEqual(0);
          await screenshot(page, `views/${view.name}-${size.width}x${size.height}-${scheme}`);
        }
      }
      for (const chart of view.charts) {
        const figure = page.locator('figure.chart', { has: page.locator(`canvas#${chart}`) });
        await figure.locator('details.chart-data summary').click();
        await figure.locator('details.chart-data tbody th').first().waitFor();
        const steps = await figure.locator('details.chart-data tbody th').allInnerTexts();
        expect(steps.length, chart).toBeGreaterThan(0);
        // The first step is dated; each later one is a time of day, dated again where the day changes (and the last
        // ones marked while their points may still arrive).
        expect(steps[0], chart).toMatch(/^\d{4}-\d\d-\d\d( \d\d:\d\d)?( \(not final yet\))?$/);
        for (const step of steps.slice(1)) expect(step, chart).toMatch(/^(\d{4}-\d\d-\d\d ?)?(\d\d:\d\d)?( \(not final yet\))?$/);
      }
      expect(watched.errors).toEqual([]);
      expect(watched.foreign).toEqual([]);
    });
  }

  it('charts name their axes: the zone and step of the times, the unit of the values', async () => {
    await page.setViewportSize(SIZES[0]!);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${collector.url}/?view=trends`);
    await ready(page);
    // The canvas's accessible name says what chart.js draws as the axis titles.
    const label = (await page.locator('canvas#chart-clients').getAttribute('aria-label')) ?? '';
    expect(label).toMatch(/ Horizontal axis: start of each \d+-(minute|hour|day) step \(.+\)\. Vertical axis: requests per step\.$/);
    const share = (await page.locator('canvas#chart-share').getAttribute('aria-label')) ?? '';
    expect(share).toMatch(/ Vertical axis: negotiated share\.$/);
  });

  it('no range end and no step start that the page read lies after the moment it was answered', () => {
    expect(answeredTimes.length).toBeGreaterThan(50);
    const late = answeredTimes.filter(({ value, answeredAt }) => Date.parse(value) > answeredAt);
    expect(late).toEqual([]);
  });
});
