import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINUTE_NS, extensionPoint, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';
import { type CollectorPage, collectorPage } from './helpers/collector-page.js';
import { ready } from './helpers/browser.js';

/**
 * More clients than one matrix answer holds (the API sends the 500 busiest): the page says how many there are and
 * that it shows the busiest, instead of "500 of 500". One client is itself named `_OTHER` (what a sender's
 * cardinality cap reports): its row and the row summing the rest past the limit are told apart.
 */

const CLIENTS = 520;
const TASKS = 'io.modelcontextprotocol/tasks';
let fixture: CollectorPage;

beforeAll(async () => {
  fixture = await collectorPage();
  const timeMs = Math.floor(Date.now() / 60_000) * 60_000 - 120_000;
  const at = { startNs: msToNs(timeMs) - MINUTE_NS, timeNs: msToNs(timeMs) };
  const names = Array.from({ length: CLIENTS }, (_, index) => `client-${String(index).padStart(3, '0')}`);
  // Every client declares tasks on every request (the server does too); `_OTHER` is the busiest.
  const counts = [...names.map((client, index) => ({ client, count: 1000 - index })), { client: '_OTHER', count: 5000 }];
  const response = await postMetrics(
    fixture.collector.url,
    metricsRequest({
      requests: counts.map(({ client, count }) => requestPoint({ client, count, ...at })),
      extensions: counts.map(({ client, count }) => extensionPoint({ client, count, id: TASKS, clientDeclared: true, serverDeclared: true, ...at })),
    }),
  );
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
    expect(summary).toContain(`500 of ${CLIENTS + 1} clients`);
    expect(summary).toContain('(shown: the 500 busiest clients; filter or narrow the range for the rest)');
    expect(fixture.watched.errors).toEqual([]);
  });
});

describe('the row summing the clients past the limit, beside a client named _OTHER', () => {
  it('the API marks only the summed row, with how many rows it sums', async () => {
    const response = await fetch(`${fixture.collector.url}/api/v1/matrix?from=-1h`);
    const view = (await response.json()) as { rows: { client: string; requests: number; summedRows?: number }[] };
    const named = view.rows.filter((row) => row.client === '_OTHER');
    expect(named).toHaveLength(2);
    expect(named[0]).toMatchObject({ requests: 5000 });
    expect(named[0]?.summedRows).toBeUndefined();
    // 521 rows, 499 kept: the summed row holds the 22 least busy (client-499 … client-519 and one more).
    expect(named[1]?.summedRows).toBe(CLIENTS + 1 - 499);
  });

  it("the summed row's cell says in its tooltip what it sums instead of asking for a split of a client named _OTHER", async () => {
    const { page } = fixture.watched;
    await page.goto(`${fixture.collector.url}/?rows=_OTHER`);
    await ready(page);
    const rows = page.locator('tr[data-client="_OTHER"]');
    await expect(rows.count()).resolves.toBe(2);
    const asked: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/v1/matrix/cell')) asked.push(request.url());
    });
    // By requests: the summed row (22 clients of ~490 requests each) above the real `_OTHER` (5,000).
    const [summed, real] = [rows.nth(0), rows.nth(1)];
    await expect(real.innerText()).resolves.toContain('5,000');
    await summed.locator(`td.cell[data-ext="${TASKS}"]`).hover();
    await expect
      .poll(() => page.locator('#cell-tooltip').innerText(), { timeout: 10_000 })
      .toContain(`This row sums the ${CLIENTS + 1 - 499} least busy rows past the row limit`);
    await real.locator(`td.cell[data-ext="${TASKS}"]`).hover();
    await expect.poll(() => page.locator('#cell-tooltip .tooltip-split-title').innerText(), { timeout: 10_000 }).toBe('Across 1 instance:');
    expect(asked).toHaveLength(1);
    expect(fixture.watched.errors).toEqual([]);
  });
});
