import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE_NS, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';
import { type CollectorPage, collectorPage } from './helpers/collector-page.js';
import { ready } from './helpers/browser.js';

/**
 * More clients than one matrix answer holds (the API sends the 500 busiest): the page says how many there are and
 * that it shows the busiest, instead of "500 of 500".
 */

const CLIENTS = 520;
let fixture: CollectorPage;

beforeAll(async () => {
  fixture = await collectorPage();
  const timeMs = Math.floor(Date.now() / 60_000) * 60_000 - 120_000;
  const at = { startNs: msToNs(timeMs) - MINUTE_NS, timeNs: msToNs(timeMs) };
  const names = Array.from({ length: CLIENTS }, (_, index) => `client-${String(index).padStart(3, '0')}`);
  const response = await postMetrics(fixture.collector.url, metricsRequest({ requests: names.map((client, index) => requestPoint({ client, count: 1000 - index, ...at })), extensions: [] }));
  expect(response.status).toBe(200);
}, 60_000);

afterAll(async () => {
  await fixture?.close();
});

describe('a matrix answer cut at its row limit', () => {
  it('the summary counts every client and says only the 500 busiest are shown', async () => {
    const { page } = fixture.watched;
    await page.goto(`${fixture.collector.url}/`);
    await ready(page);
    const summary = await page.locator('p.summary').first().innerText();
    expect(summary).toContain(`500 of ${CLIENTS} clients`);
    expect(summary).toContain('(shown: the 500 busiest clients; filter or narrow the range for the rest)');
    expect(fixture.watched.errors).toEqual([]);
  });
});
