import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, agentEnv, fixture, nodeArgs } from '../support/processes.js';
import { type CollectorPage, collectorPage } from './helpers/collector-page.js';
import { ready, screenshot } from './helpers/browser.js';

/**
 * Rows by service and by instance, and a cell split across instances, in real Chromium against a real collector fed
 * by two real instrumented instances of one service: shop-a advertises tasks and search, the other (whose instance
 * id looks like markup) only tasks. Client gamma declares both ids on each of its requests and calls both instances;
 * client omega declares tasks only and calls the second.
 */

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const SHOP_B = '<i>shop-b</i>';
const ROW_A = 'shop / shop-a';
const ROW_B = `shop / ${SHOP_B}`;

function instance(collectorUrl: string, id: string, extensions: Record<string, Record<string, string>>): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: nodeArgs(fixture('dashboard-stdio.mjs'), true),
    cwd: ROOT,
    env: agentEnv(collectorUrl, {
      OTEL_SERVICE_NAME: 'shop',
      OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${id}`,
      FIXTURE_EXTENSIONS: JSON.stringify(extensions),
    }),
    stderr: 'pipe',
  });
}

/** One client session: connect (a 2026-07-28 client discovers the server first), `calls` tool calls, close. */
async function session(name: string, extensions: Record<string, Record<string, string>>, transport: StdioClientTransport, calls: number): Promise<void> {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: { extensions }, versionNegotiation: { mode: 'auto' } });
  await client.connect(transport);
  for (let index = 0; index < calls; index++) await client.callTool({ name: 'echo', arguments: { text: `${name}-${index}` } });
  await client.close();
}

let fixtureSet: CollectorPage;
let page: Page;

const cell = (row: string, ext: string) => page.locator(`td.cell[data-client="${row.replaceAll('"', '\\"')}"][data-ext="${ext}"]`);

async function andRender(action: () => Promise<unknown>): Promise<void> {
  await page.evaluate('delete document.body.dataset.ready');
  await action();
  await ready(page);
}

/** Requests per matrix row of `group`, as the API counts them. */
async function rows(url: string, group: string): Promise<Record<string, number>> {
  const body = (await (await fetch(`${url}/api/v1/matrix?group=${group}`)).json()) as { rows: { client: string; requests: number }[] };
  return Object.fromEntries(body.rows.map((row) => [row.client, row.requests]));
}

beforeAll(async () => {
  fixtureSet = await collectorPage();
  const url = fixtureSet.collector.url;
  const both = { [TASKS]: {}, [SEARCH]: {} };
  await session('gamma', both, instance(url, 'shop-a', { [TASKS]: {}, [SEARCH]: { mode: 'fast' } }), 2);
  await session('gamma', both, instance(url, SHOP_B, { [TASKS]: {} }), 1);
  await session('omega', { [TASKS]: {} }, instance(url, SHOP_B, { [TASKS]: {} }), 1);
  // Every export has arrived once each instance counts what its clients sent: a discovery and the calls per session.
  const expected = { [ROW_A]: 3, [ROW_B]: 4 };
  const deadline = Date.now() + 20_000;
  for (;;) {
    const seen = await rows(url, 'instance');
    if (Object.keys(seen).length === 2 && Object.entries(expected).every(([row, n]) => seen[row] === n)) break;
    if (Date.now() > deadline) throw new Error(`the exports did not all arrive: ${JSON.stringify(seen)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  page = fixtureSet.watched.page;
}, 120_000);

afterAll(async () => {
  await fixtureSet?.close();
});

describe('rows by instance and a cell across instances, in Chromium', () => {
  it('grouped by instance, each instance row shows its own negotiated counts; the markup-like instance id is text', async () => {
    await page.goto(`${fixtureSet.collector.url}/?group=instance`);
    await ready(page);
    await expect(page.locator('#filter-group').inputValue()).resolves.toBe('instance');
    await expect(page.locator('thead th.corner').innerText()).resolves.toMatch(/^Instance/);
    await expect(page.locator('label[for="matrix-rows"]').innerText()).resolves.toBe('Filter instances');
    await expect(page.locator('tbody tr[data-client] th.client a').allInnerTexts()).resolves.toEqual([ROW_B, ROW_A]);
    // shop-a advertises search: negotiated on all 3 of gamma's requests.
    await expect(cell(ROW_A, SEARCH).getAttribute('class')).resolves.toContain('state-negotiated');
    await expect(cell(ROW_A, SEARCH).getAttribute('aria-label')).resolves.toBe(
      `${ROW_A}, ${SEARCH}: negotiated on every request, negotiated: 100 % of requests`,
    );
    await expect(cell(ROW_A, TASKS).getAttribute('data-share')).resolves.toBe('1');
    // The other lacks it: gamma's 2 of its 4 requests declared it, none negotiated it; tasks on all 4.
    await expect(cell(ROW_B, SEARCH).getAttribute('class')).resolves.toContain('state-client');
    await expect(cell(ROW_B, SEARCH).innerText()).resolves.toMatch(/^0 %\s*◐ client$/);
    await expect(cell(ROW_B, TASKS).getAttribute('class')).resolves.toContain('state-negotiated');
    await expect(page.locator('tbody tr[data-client] td.requests').allInnerTexts()).resolves.toEqual(['4', '3']);
    // The id is shown as it was sent, never parsed: no <i> element anywhere on the page.
    await expect(page.locator('main i').count()).resolves.toBe(0);
    await expect(page.locator('.summary').innerText()).resolves.toContain('2 of 2 instances');
    const path = await screenshot(page, 'matrix-by-instance');
    expect(path).toMatch(/matrix-by-instance\.png$/);
    // Nothing is cut off: the grid's box holds the whole table at 1366 px (no horizontal scroll needed).
    const overflow = await page.locator('.grid-wrap').evaluate((element) => element.scrollWidth - element.clientWidth);
    expect(overflow).toBe(0);
  });

  it('rows by client on screen, the page reads the rows by instance in the background: regrouping by instance then asks the API for nothing', async () => {
    const background = page.waitForResponse((response) => response.url().includes('/api/v1/matrix?') && response.url().includes('group=instance'));
    await page.goto(`${fixtureSet.collector.url}/?group=client`);
    await ready(page);
    await (await background).finished();
    const asked: string[] = [];
    const listener = (request: { url(): string }): void => void (request.url().includes('/api/v1/matrix?') && asked.push(request.url()));
    page.on('request', listener);
    try {
      await andRender(() => page.selectOption('#filter-group', 'instance'));
      await expect(page.locator('tbody tr[data-client] th.client a').allInnerTexts()).resolves.toEqual([ROW_B, ROW_A]);
      expect(asked).toEqual([]);
    } finally {
      page.off('request', listener);
    }
  });

  it('a change of range while the rows by instance are still being read in the background aborts that read', async () => {
    const held: Route[] = [];
    const pattern = (url: URL): boolean => url.pathname === '/api/v1/matrix' && url.searchParams.get('group') === 'instance';
    // The background read is held unanswered, as a long one on a large fleet would be.
    await page.route(pattern, (route) => void held.push(route));
    // The page's fetches, as they are aborted (an aborted request the test holds is not reported as failed).
    await page.addInitScript(() => {
      type Fetch = (input: unknown, init?: { signal?: { addEventListener(type: 'abort', listener: () => void): void } }) => unknown;
      const scope = globalThis as unknown as { fetch: Fetch; abortedFetches: string[] };
      const aborted: string[] = [];
      scope.abortedFetches = aborted;
      const original = scope.fetch.bind(scope);
      scope.fetch = (input, init) => {
        init?.signal?.addEventListener('abort', () => aborted.push(String(input)));
        return original(input, init);
      };
    });
    try {
      await page.goto(`${fixtureSet.collector.url}/?group=client`);
      await ready(page);
      await expect.poll(() => held.length).toBe(1);
      const range = await page.locator('#filter-range').inputValue();
      await andRender(() => page.selectOption('#filter-range', range === '7d' ? '24h' : '7d'));
      const aborted = await page.evaluate(() => (globalThis as unknown as { abortedFetches: string[] }).abortedFetches);
      expect(aborted).toHaveLength(1);
      expect(pattern(new URL(aborted[0] ?? '', fixtureSet.collector.url))).toBe(true);
    } finally {
      await page.unroute(pattern);
    }
  });

  it('"Rows by" offers service and instance; by service the two instances are summed', async () => {
    await expect(page.locator('#filter-group option').allInnerTexts()).resolves.toEqual(['client name', 'name@version', 'service', 'instance']);
    await andRender(() => page.selectOption('#filter-group', 'service'));
    expect(new URL(page.url()).searchParams.get('group')).toBe('service');
    await expect(page.locator('tbody tr[data-client] th.client a').allInnerTexts()).resolves.toEqual(['shop']);
    // Search negotiated on 3 of the service's 7 requests.
    await expect(cell('shop', SEARCH).getAttribute('class')).resolves.toContain('state-partial');
    await expect(cell('shop', SEARCH).innerText()).resolves.toMatch(/43 %\s*◒ partial/);
    // The client filter narrows the requests counted: omega's 2, which never named search (no column for it).
    await andRender(() => page.selectOption('#filter-client', 'omega'));
    await expect(page.locator('tbody tr[data-client] td.requests').allInnerTexts()).resolves.toEqual(['2']);
    await expect(cell('shop', SEARCH).count()).resolves.toBe(0);
    await expect(cell('shop', TASKS).getAttribute('class')).resolves.toContain('state-negotiated');
  });

  it("a client's cell, opened, shows its split across the instances that answered it", async () => {
    await page.goto(`${fixtureSet.collector.url}/?group=client`);
    await ready(page);
    await andRender(() => cell('gamma', SEARCH).click());
    const split = page.locator('.drill .split');
    await expect(split.locator('h4').innerText()).resolves.toBe('Across instances (2)');
    const lines = await split.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((child) => (child.textContent ?? '').trim())));
    expect(lines).toEqual([
      // Instance, requests, state, negotiated, client declared, server advertised, -32021.
      [ROW_A, '3', '● all 100 %', '3', '3', '3', '0'],
      [ROW_B, '2', '◐ client 0 %', '0', '2', '0', '0'],
    ]);
    await expect(page.locator('.drill .split i').count()).resolves.toBe(0);
    // The examples name the instance that answered each request.
    const answeredBy = await page.locator('.drill table.examples td.answered-by').allInnerTexts();
    expect(new Set(answeredBy)).toEqual(new Set([ROW_A, ROW_B]));
    await split.scrollIntoViewIfNeeded();
    await screenshot(page, 'matrix-cell-instances');
  });

  it("a client's cell, hovered and focused, names in its tooltip the instances that answered it, with the state and share at each", async () => {
    await page.goto(`${fixtureSet.collector.url}/?group=client`);
    await ready(page);
    await cell('gamma', SEARCH).hover();
    const tooltip = page.locator('#cell-tooltip');
    await expect.poll(() => tooltip.locator('.tooltip-split-title').innerText(), { timeout: 10_000 }).toBe('Across 2 instances:');
    await expect(tooltip.locator('ul.tooltip-split li').allInnerTexts()).resolves.toEqual([`${ROW_A} 3 req · all 100 %`, `${ROW_B} 2 req · client 0 %`]);
    await screenshot(page, 'matrix-cell-tooltip-split');
    // Keyboard focus shows the same (the pointer moved away first).
    await page.mouse.move(0, 0);
    await cell('gamma', SEARCH).focus();
    await tooltip.locator('ul.tooltip-split li').first().waitFor({ timeout: 10_000 });
    await expect(tooltip.locator('ul.tooltip-split li').allInnerTexts()).resolves.toEqual([`${ROW_A} 3 req · all 100 %`, `${ROW_B} 2 req · client 0 %`]);
  });

  it('grouped by instance, an opened cell lists only that instance, and its examples only its requests', async () => {
    await page.goto(`${fixtureSet.collector.url}/?group=instance`);
    await ready(page);
    await andRender(() => cell(ROW_B, TASKS).click());
    const lines = await page
      .locator('.drill .split tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.children].map((child) => (child.textContent ?? '').trim())));
    expect(lines).toEqual([[ROW_B, '4', '● all 100 %', '4', '4', '4', '0']]);
    const answeredBy = await page.locator('.drill table.examples td.answered-by').allInnerTexts();
    expect(answeredBy.length).toBeGreaterThan(0);
    expect(new Set(answeredBy)).toEqual(new Set([ROW_B]));
    expect(fixtureSet.watched.errors).toEqual([]);
    expect(fixtureSet.watched.dialogs).toEqual([]);
    expect(fixtureSet.watched.foreign).toEqual([]);
  });
});
