import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { advertisedPoint, metricsRequest, msToNs, postMetrics } from '../collector/helpers/otlp.js';
import { type Browser, type Watched, launchBrowser, ready, watchedPage } from './helpers/browser.js';

/**
 * A fleet larger than one page of `/api/v1/instances` (500): the fleet view pages through up to 1,000 instances,
 * says how many more there are, and a service filter reaches instances past that bound.
 */

const BIG = 1100;
const SMALL = 3;
let collector: TestCollector;
let cleanup: () => Promise<void>;
let browser: Browser;
let watched: Watched;

beforeAll(async () => {
  const temp = await tempDir();
  cleanup = temp.cleanup;
  collector = await startTestCollector(temp.dir);
  const timeNs = msToNs(Date.now() - 60_000);
  const instance = (service: string, index: number) => ({
    resource: { service, instance: `${service}-${String(index).padStart(4, '0')}` },
    advertised: [advertisedPoint({ id: 'com.example/search', fingerprint: 'f1', timeNs })],
  });
  // svc-small sorts after svc-big: its instances are past the first pages.
  const big = Array.from({ length: BIG }, (_, index) => instance('svc-big', index));
  for (let offset = 0; offset < BIG; offset += 700)
    expect((await postMetrics(collector.url, metricsRequest(...big.slice(offset, offset + 700)))).status).toBe(200);
  expect((await postMetrics(collector.url, metricsRequest(...Array.from({ length: SMALL }, (_, index) => instance('svc-small', index))))).status).toBe(200);
  browser = await launchBrowser();
  watched = await watchedPage(browser.context, collector.url);
  watched.page.setDefaultTimeout(20_000);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await collector?.close();
  await cleanup?.();
});

describe(`a fleet of ${BIG + SMALL} instances`, () => {
  it('the fleet view pages past the first 500 instances, up to 1,000, and says how many it does not show', async () => {
    const { page } = watched;
    await page.goto(`${collector.url}/?view=fleet`);
    await ready(page);
    await expect(page.locator('.fleet p.more').innerText()).resolves.toBe(
      `Showing 1000 of ${BIG + SMALL} instances: ${BIG + SMALL - 1000} more not shown. Filter by service to see them.`,
    );
    await expect(page.locator('.fleet table.fleet-table tbody tr').count()).resolves.toBe(1000);
    expect(watched.errors).toEqual([]);
  });

  it('with a service filter, that service is read from the API, also when its instances come after the bound', async () => {
    const { page } = watched;
    await page.goto(`${collector.url}/?view=fleet&service=svc-small`);
    await ready(page);
    await expect(page.locator('.fleet table.fleet-table tbody tr').count()).resolves.toBe(SMALL);
    await expect(page.locator('.fleet p.more').count()).resolves.toBe(0);
    await expect(page.locator('.fleet section.service h3').innerText()).resolves.toContain('svc-small');
    expect(watched.errors).toEqual([]);
  });
});
