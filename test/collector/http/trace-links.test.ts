/**
 * Trace links: with `EXTSCOPE_TRACE_URL` set, a real collector's example requests (from spans sent over OTLP) carry
 * the link to their trace in the API, and the drill-down in real headless Chromium opens it. Tested with the
 * template alone (no tracing backend runs here): the link is checked, not followed.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ATTR_CLIENT_DECLARATION,
  ATTR_CLIENT_EXTENSIONS,
  ATTR_CLIENT_NAME,
  ATTR_CLIENT_VERSION,
  ATTR_MCP_METHOD_NAME,
  ATTR_NEGOTIATED_EXTENSIONS,
  ATTR_OUTCOME,
  ATTR_SERVER_EXTENSIONS,
} from '../../../contract/index.js';
import { type Browser, launchBrowser, ready, screenshot, watchedPage } from '../../dashboard/helpers/browser.js';
import { type TestCollector, getJson, startTestCollector, tempDir } from '../helpers/collector.js';
import { MINUTE_NS, attribute, extensionPoint, metricsRequest, msToNs, post, postMetrics, requestPoint, tracesRequest } from '../helpers/otlp.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const TEMPLATE = 'http://jaeger.example.test:16686/trace/{traceId}?uiFind={spanId}';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

describe('trace links (EXTSCOPE_TRACE_URL)', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    temp = await tempDir();
    collector = await startTestCollector(temp.dir, { traceUrl: TEMPLATE });
    const timeNs = msToNs(Date.now());
    const at = { startNs: timeNs - MINUTE_NS, timeNs };
    const client = { client: 'alpha', version: '2.0' };
    const metrics = metricsRequest({
      resource: { service: 'api', instance: 'a-1' },
      requests: [requestPoint({ ...client, count: 1, ...at })],
      extensions: [extensionPoint({ ...client, id: TASKS, clientDeclared: true, serverDeclared: true, count: 1, ...at })],
    });
    expect((await postMetrics(collector.url, metrics)).status).toBe(200);
    const span = {
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      startNs: timeNs - 2_000_000n,
      endNs: timeNs,
      attributes: [
        attribute(ATTR_MCP_METHOD_NAME, 'tools/call'),
        attribute(ATTR_CLIENT_NAME, 'alpha'),
        attribute(ATTR_CLIENT_VERSION, '2.0'),
        attribute(ATTR_CLIENT_DECLARATION, 'declared'),
        attribute(ATTR_OUTCOME, 'complete'),
        { key: ATTR_CLIENT_EXTENSIONS, value: { arrayValue: { values: [{ stringValue: TASKS }] } } },
        { key: ATTR_SERVER_EXTENSIONS, value: { arrayValue: { values: [{ stringValue: TASKS }] } } },
        { key: ATTR_NEGOTIATED_EXTENSIONS, value: { arrayValue: { values: [{ stringValue: TASKS }] } } },
      ],
    };
    expect((await post(collector.url, '/v1/traces', tracesRequest({ service: 'api', instance: 'a-1' }, [span]), { format: 'json' })).status).toBe(200);
    browser = await launchBrowser();
    page = (await watchedPage(browser.context, collector.url)).page;
  });
  afterAll(async () => {
    await browser?.close();
    await collector?.close();
    await temp?.cleanup();
  });

  it('the API gives each example the link its template makes of the trace and span ids', async () => {
    const { status, body } = await getJson<{ examples: { traceId: string; traceUrl: string | null }[] }>(
      `${collector.url}/api/v1/examples?client=alpha&extension=${encodeURIComponent(TASKS)}`,
    );
    expect(status).toBe(200);
    expect(body.examples).toEqual([
      expect.objectContaining({ traceId: TRACE_ID, traceUrl: `http://jaeger.example.test:16686/trace/${TRACE_ID}?uiFind=${SPAN_ID}` }),
    ]);
  });

  it('the drill-down links the trace id to it, opened apart', async () => {
    await page.goto(`${collector.url}/?group=client&cell.client=alpha&cell.ext=${encodeURIComponent(TASKS)}`);
    await ready(page);
    const link = page.locator('table.examples tbody tr td.trace a.trace-link');
    await expect(link.count()).resolves.toBe(1);
    await expect(link.getAttribute('href')).resolves.toBe(`http://jaeger.example.test:16686/trace/${TRACE_ID}?uiFind=${SPAN_ID}`);
    await expect(link.getAttribute('rel')).resolves.toBe('noopener noreferrer');
    await expect(link.getAttribute('target')).resolves.toBe('_blank');
    await expect(link.innerText()).resolves.toBe(TRACE_ID);
    await link.scrollIntoViewIfNeeded();
    await screenshot(page, 'trace-link');
  });
});
