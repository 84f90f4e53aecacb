import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUMULATIVE, MINUTE_NS, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';
import { ready, screenshot } from './helpers/browser.js';
import { type CollectorPage, collectorPage } from './helpers/collector-page.js';

/** The page's notice of refused data points, in real headless Chromium against a real collector. */

const HOSTILE_SERVICE = '<img src=x onerror="alert(1)">svc';

let fixture: CollectorPage;

beforeAll(async () => {
  fixture = await collectorPage();
}, 120_000);

afterAll(() => fixture?.close());

describe('the refused-points notice', () => {
  it('is absent while nothing was refused, then says how many points were refused, by service and reason, with the service name as text', async () => {
    const { collector, watched } = fixture;
    const { page } = watched;
    await page.goto(`${collector.url}/`);
    await ready(page);
    await expect(page.locator('#rejections').isHidden()).resolves.toBe(true);

    // Three cumulative points from a resource with no instance id and no process.pid: refused.
    const t = msToNs(Date.now());
    const request = metricsRequest({
      resource: { service: HOSTILE_SERVICE },
      temporality: CUMULATIVE,
      requests: [1, 2, 3].map((count) => requestPoint({ client: `c${count}`, count, startNs: t - 2n * MINUTE_NS, timeNs: t - MINUTE_NS })),
    });
    expect((await postMetrics(collector.url, request)).status).toBe(200);

    await page.reload();
    await ready(page);
    const strip = page.locator('#rejections');
    await expect(strip.isVisible()).resolves.toBe(true);
    await expect(strip.locator('.notice-title').innerText()).resolves.toMatch(/^3 data points were refused since the collector started/);
    await strip.locator('summary').click();
    const cells = await strip.locator('tbody tr td').allInnerTexts();
    expect(cells[0]).toBe(HOSTILE_SERVICE);
    expect(cells[1]).toBe('3');
    expect(cells[2]).toMatch(/service\.instance\.id/);
    await expect(page.locator('img').count()).resolves.toBe(0);
    await screenshot(page, 'rejections-notice');
    expect(watched.dialogs).toEqual([]);
    expect(watched.errors).toEqual([]);
    expect(watched.foreign).toEqual([]);
  });
});
