import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { MINUTE_NS, extensionPoint, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';
import { type Browser, type Watched, launchBrowser, ready, watchedPage } from './helpers/browser.js';

/**
 * A matrix larger than a screen: only the rows in view are in the DOM, yet the keyboard reaches every row, scrolling
 * renders the rest, and the exports hold every row.
 */

const CLIENTS = 150;
const IDS = ['com.example/a', 'com.example/b', 'com.example/c', 'com.example/d', 'com.example/e'];
let collector: TestCollector;
let cleanup: () => Promise<void>;
let browser: Browser;
let watched: Watched;

beforeAll(async () => {
  const temp = await tempDir();
  cleanup = temp.cleanup;
  collector = await startTestCollector(temp.dir);
  const timeMs = Math.floor(Date.now() / 60_000) * 60_000 - 120_000;
  const at = { startNs: msToNs(timeMs) - MINUTE_NS, timeNs: msToNs(timeMs) };
  // client-000 has the most requests, client-149 the fewest: the default sort puts them first and last.
  const names = Array.from({ length: CLIENTS }, (_, index) => `client-${String(index).padStart(3, '0')}`);
  const response = await postMetrics(
    collector.url,
    metricsRequest({
      requests: names.map((client, index) => requestPoint({ client, count: 1000 - index, ...at })),
      extensions: names.flatMap((client, index) =>
        IDS.map((id, k) => extensionPoint({ client, id, clientDeclared: (index + k) % 2 === 0, serverDeclared: k < 3, count: 1000 - index, ...at })),
      ),
    }),
  );
  expect(response.status).toBe(200);
  browser = await launchBrowser();
  watched = await watchedPage(browser.context, collector.url);
  watched.page.setDefaultTimeout(10_000);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await collector?.close();
  await cleanup?.();
});

describe('a matrix of 150 clients', () => {
  it('renders the rows in view, and the keyboard reaches the last row', async () => {
    const { page } = watched;
    await page.goto(`${collector.url}/`);
    await ready(page);
    await expect(page.locator('p.summary').first().innerText()).resolves.toContain(`${CLIENTS} of ${CLIENTS} clients`);
    const rendered = await page.locator('tbody tr[data-client]').count();
    expect(rendered).toBeGreaterThan(10);
    expect(rendered).toBeLessThan(CLIENTS);

    await page.locator('td.cell[data-row="0"][data-col="0"]').focus();
    for (let presses = 0; presses < 30; presses++) {
      await page.keyboard.press('PageDown');
      if ((await page.evaluate('document.activeElement.dataset.row')) === String(CLIENTS - 1)) break;
    }
    await expect(page.evaluate('document.activeElement.dataset.client')).resolves.toBe('client-149');
    await expect(page.locator('#cell-tooltip').innerText()).resolves.toContain('of 851 requests');
    await page.keyboard.press('ArrowUp');
    await expect(page.evaluate('document.activeElement.dataset.client')).resolves.toBe('client-148');
    await page.keyboard.press('End');
    await expect(page.evaluate('document.activeElement.dataset.ext')).resolves.toBe('com.example/e');
  });

  it('scrolling renders the rows coming into view; the exports hold every row', async () => {
    const { page } = watched;
    await page.goto(`${collector.url}/`);
    await ready(page);
    await expect(page.locator('tbody tr[data-client="client-120"]').count()).resolves.toBe(0);
    await page.locator('.grid-wrap').evaluate((element) => element.scrollBy(0, 120 * 46));
    await page.locator('tbody tr[data-client="client-120"]').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('.exports button', { hasText: 'CSV' }).click()]);
    const csv = await readFile((await download.path()) ?? '', 'utf8');
    expect(csv.trim().split('\r\n').length).toBe(CLIENTS + 1);
    expect(watched.errors).toEqual([]);
  });
});
