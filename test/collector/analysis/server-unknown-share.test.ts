import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, agentEnv, fixture, nodeArgs } from '../../support/processes.js';
import { launchBrowser, ready, watchedPage } from '../../dashboard/helpers/browser.js';
import { type TestCollector, getJson, startTestCollector, tempDir } from '../helpers/collector.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const CLIENT = { name: 'probe-client', version: '1.0.0' };
const ENVELOPE = (protocolVersion: string) => ({
  'io.modelcontextprotocol/protocolVersion': protocolVersion,
  'io.modelcontextprotocol/clientInfo': CLIENT,
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
});

interface Cell {
  id: string;
  clientDeclared: number;
  serverAdvertised: number;
  negotiated: number;
  serverUnknown: number;
}
interface Row {
  client: string;
  requests: number;
  serverUnknown: number;
  extensions: Cell[];
}

describe('shares are taken over requests whose server declaration is known', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  beforeAll(async () => {
    temp = await tempDir();
    collector = await startTestCollector(temp.dir);
  });
  afterAll(async () => {
    await collector.close();
    await temp.cleanup();
  });

  it('answers given before any server instance existed are their own count (also after a restart), left out of the shares of the matrix, time series, trends, /metrics and dashboard', async () => {
    const server = spawn(process.execPath, nodeArgs(fixture('v2-http.mjs'), true), { cwd: ROOT, env: agentEnv(collector.url) });
    const exited = once(server, 'exit');
    try {
      const [line] = (await once(server.stdout, 'data')) as [Buffer];
      const url = new URL(`http://127.0.0.1:${(JSON.parse(line.toString('utf8')) as { port: number }).port}/mcp`);
      const client = new Client(CLIENT, { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(url));
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      await client.callTool({ name: 'echo', arguments: { text: 'a' } });
      await client.callTool({ name: 'echo', arguments: { text: 'b' } });
      // A real listen(): createMcpHandler's entry acknowledges subscriptions/listen itself; no server instance sees it.
      const subscription = await client.listen({ toolsListChanged: true });
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
      await client.close();
      // The same client asking in a revision this server does not support: the entry answers -32022 itself.
      const unsupported = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2099-01-01',
          'mcp-method': 'tools/list',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: { _meta: ENVELOPE('2099-01-01') } }),
      });
      expect(unsupported.status).toBe(400);
      expect(await unsupported.text()).toContain('-32022');
    } finally {
      server.kill('SIGTERM');
      await exited;
    }

    // Five requests: discover, two calls (each negotiating tasks, which every instance advertises), and the two
    // answers no instance gave. The share is 3 of 3, not 3 of 5; the other two are shown as their own count.
    const matrix = async (): Promise<Row[]> => (await getJson<{ rows: Row[] }>(`${collector.url}/api/v1/matrix?from=-1h`)).body.rows;
    await expect.poll(async () => (await matrix())[0]?.requests, { timeout: 20_000 }).toBe(5);
    const [row] = await matrix();
    expect(row).toMatchObject({ client: CLIENT.name, requests: 5, serverUnknown: 2 });
    expect(row?.extensions.find((cell) => cell.id === TASKS)).toMatchObject({
      id: TASKS,
      clientDeclared: 5,
      serverAdvertised: 3,
      negotiated: 3,
      serverUnknown: 2,
      state: 'negotiated',
      negotiatedShare: 1,
    });

    // The Prometheus counters keep the two apart the same way: 3 negotiated, 2 with the server unknown, out of 5.
    const exposition = (await (await fetch(`${collector.url}/metrics`)).text()).split('\n');
    const counted = (prefix: string): number =>
      exposition.filter((line) => line.startsWith(prefix)).reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
    expect(counted('extscope_requests_total{')).toBe(5);
    expect(
      exposition
        .filter((line) => line.startsWith('extscope_requests_total{') && line.includes('server_declaration="unknown"'))
        .map((line) => Number(line.split(' ').at(-1))),
    ).toEqual([2]);
    const tasksLines = exposition.filter((line) => line.startsWith('extscope_extension_requests_total{') && line.includes(`extension="${TASKS}"`));
    expect(tasksLines.map((line) => `${/state="([^"]*)"/.exec(line)?.[1]} ${line.split(' ').at(-1)}`).sort()).toEqual(['negotiated 3', 'unknown 2']);

    // After a restart the collector finds them again in what it stored.
    await collector.close();
    collector = await startTestCollector(temp.dir);
    expect((await matrix())[0]).toMatchObject({ requests: 5, serverUnknown: 2 });

    // The time series and the trends take the share over the same requests.
    const series = (
      await getJson<{ points: { requests: number; serverUnknown: number; negotiated: number; negotiatedShare: number | null }[] }>(
        `${collector.url}/api/v1/timeseries?extension=${encodeURIComponent(TASKS)}&from=-1h&step=60m`,
      )
    ).body.points;
    const busy = series.filter((point) => point.requests > 0);
    expect(busy.reduce((sum, point) => sum + point.requests, 0)).toBe(5);
    expect(busy.reduce((sum, point) => sum + point.serverUnknown, 0)).toBe(2);
    expect(busy.map((point) => point.negotiatedShare)).toEqual(busy.map(() => 1));
    const trends = (
      await getJson<{ requests: number[]; serverUnknown: number[]; extensions: { id: string; negotiatedShare: (number | null)[] }[] }>(
        `${collector.url}/api/v1/trends/extensions?from=-1h&step=60m`,
      )
    ).body;
    expect(trends.serverUnknown.reduce((sum, value) => sum + value, 0)).toBe(2);
    const tasksShares = trends.extensions.find((entry) => entry.id === TASKS)?.negotiatedShare ?? [];
    expect(tasksShares.filter((value, index) => (trends.requests[index] ?? 0) > 0)).toEqual(trends.requests.filter((n) => n > 0).map(() => 1));

    // The dashboard cell shows the share over the known requests and says how many had no server.
    const browser = await launchBrowser();
    try {
      const { page } = await watchedPage(browser.context, collector.url);
      await page.goto(`${collector.url}/`);
      await ready(page);
      const cell = page.locator(`td.cell[data-client="${CLIENT.name}"][data-ext="${TASKS}"]`);
      await expect(cell.innerText()).resolves.toMatch(/100 %\s*● all/);
      await expect(cell.getAttribute('aria-label')).resolves.toBe(
        `${CLIENT.name}, ${TASKS}: negotiated on every request, negotiated: 100 % of 3 requests with a known server; 2 answered before any server instance existed`,
      );
      await expect(page.locator(`tbody tr[data-client="${CLIENT.name}"] td.requests`).innerText()).resolves.toBe('5\n2 no server');
      await cell.hover();
      const tooltip = await page.locator('#cell-tooltip').innerText();
      expect(tooltip).toContain('negotiated: 3 of 3 requests with a known server (100.0 %)');
      expect(tooltip).toContain('answered before any server instance existed: 2 of 5 requests (2 declaring this extension), not in the shares');
    } finally {
      await browser.close();
    }
  }, 120_000);
});
