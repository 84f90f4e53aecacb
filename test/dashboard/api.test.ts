import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTR_RPC_RESPONSE_STATUS_CODE } from '../../contract/index.js';
import { type TestCollector, getJson, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { MINUTE_NS, attribute, extensionPoint, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';

/** The trend routes the dashboard's charts read, over real HTTP and a real SQLite file. */

const TASKS = 'io.modelcontextprotocol/tasks';
const REPLAY = 'com.example/replay';
const sum = (values: number[]): number => values.reduce((total, n) => total + n, 0);

let collector: TestCollector;
let cleanup: () => Promise<void>;
// Two whole hours back, so the points land in two distinct hourly steps.
const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
const t1 = hour - 90 * 60_000;
const t2 = hour - 30 * 60_000;

beforeAll(async () => {
  const temp = await tempDir();
  cleanup = temp.cleanup;
  collector = await startTestCollector(temp.dir);
  const at = (ms: number) => ({ startNs: msToNs(ms) - MINUTE_NS, timeNs: msToNs(ms) });
  const minus32021 = { outcome: 'error', extra: [attribute(ATTR_RPC_RESPONSE_STATUS_CODE, '-32021')] };
  const export1 = metricsRequest({
    resource: { service: 'shop', instance: 'i-1' },
    requests: [
      requestPoint({ client: 'alpha', version: '1.0', declaration: 'declared', count: 5, ...at(t1) }),
      requestPoint({ client: 'alpha', version: '1.0', declaration: 'none', count: 2, ...at(t1) }),
      requestPoint({ client: 'beta', version: '2.0', declaration: 'unknown', count: 1, ...at(t2) }),
      requestPoint({ client: 'beta', version: '2.0', declaration: 'declared', count: 3, ...at(t2), ...minus32021 }),
      requestPoint({ declaration: 'declared', count: 4, ...at(t2) }),
    ],
    extensions: [
      extensionPoint({ client: 'alpha', version: '1.0', id: TASKS, clientDeclared: true, serverDeclared: true, count: 5, ...at(t1) }),
      extensionPoint({ client: 'alpha', version: '1.0', declaration: 'none', id: TASKS, clientDeclared: false, serverDeclared: true, count: 2, ...at(t1) }),
      extensionPoint({ client: 'beta', version: '2.0', declaration: 'unknown', id: TASKS, clientDeclared: false, serverDeclared: true, count: 1, ...at(t2) }),
      extensionPoint({
        client: 'beta',
        version: '2.0',
        id: REPLAY,
        clientDeclared: false,
        serverDeclared: false,
        required: true,
        count: 3,
        ...at(t2),
        ...minus32021,
      }),
      extensionPoint({ declaration: 'declared', id: TASKS, clientDeclared: true, serverDeclared: false, count: 4, ...at(t2) }),
    ],
  });
  const response = await postMetrics(collector.url, export1);
  expect(response.status).toBe(200);
  // A minute that is no multiple of 5, in its own service.
  const t3 = hour - 17 * 60_000;
  const odd = metricsRequest({
    resource: { service: 'odd', instance: 'o-1' },
    requests: [requestPoint({ client: 'alpha', version: '1.0', count: 4, ...at(t3) })],
    extensions: [extensionPoint({ client: 'alpha', version: '1.0', id: TASKS, clientDeclared: true, serverDeclared: true, count: 4, ...at(t3) })],
  });
  expect((await postMetrics(collector.url, odd)).status).toBe(200);
});
afterAll(async () => {
  await collector?.close();
  await cleanup?.();
});

const get = <T>(path: string) => getJson<T>(`${collector.url}/api/v1/${path}`);

describe('GET /api/v1/trends/*', () => {
  it('declarations: requests per step by the client declaration state, columnar', async () => {
    const { status, body } = await get<{ stepMinutes: number; times: string[]; requests: number[]; unknown: number[]; none: number[]; declared: number[] }>(
      'trends/declarations?from=-3h&step=1h&service=shop',
    );
    expect(status).toBe(200);
    expect(body.stepMinutes).toBe(60);
    expect(body.times.length).toBe(body.requests.length);
    expect([sum(body.declared), sum(body.none), sum(body.unknown), sum(body.requests)]).toEqual([12, 2, 1, 15]);
    // The two hours are two steps: 7 requests in the first, 8 in the second.
    const t1Index = body.times.indexOf(new Date(Math.floor(t1 / 3_600_000) * 3_600_000).toISOString());
    expect(body.requests[t1Index]).toBe(7);
    expect(body.requests[t1Index + 1]).toBe(8);
    // The same through the instance's series, and for one client.
    const byInstance = (await get<{ requests: number[] }>('trends/declarations?from=-3h&step=1h&instance=i-1')).body;
    expect(byInstance.requests).toEqual(body.requests);
    const alpha = (await get<{ declared: number[]; none: number[] }>('trends/declarations?from=-3h&step=1h&client=alpha&service=shop')).body;
    expect([sum(alpha.declared), sum(alpha.none)]).toEqual([5, 2]);
    expect(sum((await get<{ requests: number[] }>('trends/declarations?from=-3h&service=other')).body.requests)).toBe(0);
  });

  it('clients: requests per client per step, the top ones and the rest', async () => {
    const { body } = await get<{ clients: { client: string; total: number; requests: number[] }[]; other: { clients: number; total: number } }>(
      'trends/clients?from=-3h&step=1h&group=client_version&limit=2&service=shop',
    );
    expect(body.clients.map((client) => [client.client, client.total])).toEqual([
      ['alpha@1.0', 7],
      ['(unknown client)@(unknown version)', 4],
    ]);
    expect(body.other).toMatchObject({ clients: 1, total: 4 });
    const byName = (await get<{ clients: { client: string }[] }>('trends/clients?from=-3h&service=shop')).body;
    expect(byName.clients.map((client) => client.client).sort()).toEqual(['(unknown client)', 'alpha', 'beta']);
  });

  it('extensions: declared / advertised / negotiated per id per step, and the negotiated share of all requests', async () => {
    const { body } = await get<{
      requests: number[];
      extensions: { id: string; clientDeclared: number[]; serverAdvertised: number[]; negotiated: number[]; negotiatedShare: (number | null)[] }[];
    }>('trends/extensions?from=-3h&step=1h&service=shop');
    const tasks = body.extensions.find((entry) => entry.id === TASKS);
    expect(tasks && [sum(tasks.clientDeclared), sum(tasks.serverAdvertised), sum(tasks.negotiated)]).toEqual([9, 8, 5]);
    const first = body.requests.findIndex((n) => n > 0);
    expect(tasks?.negotiatedShare[first]).toBeCloseTo(5 / 7);
    expect(tasks?.negotiatedShare[first + 1]).toBe(0);
    expect(tasks?.negotiatedShare[0]).toBe(first === 0 ? 5 / 7 : null);
  });

  it('required: -32021 answers per step, per id they named and per client', async () => {
    const { body } = await get<{
      total: number;
      errors: number[];
      extensions: { id: string; total: number; counts: number[]; clients: { client: string; count: number }[] }[];
    }>('trends/required?from=-3h&step=1h');
    expect(body.total).toBe(3);
    expect(body.extensions).toEqual([
      { id: REPLAY, total: 3, counts: expect.any(Array), clients: [{ client: 'beta@2.0', name: 'beta', version: '2.0', count: 3 }] },
    ]);
    expect(sum(body.extensions[0]?.counts ?? [])).toBe(3);
    expect((await get<{ extensions: unknown[] }>(`trends/required?from=-3h&extension=${encodeURIComponent(TASKS)}`)).body.extensions).toEqual([]);
  });

  it('steps shorter than their rollup level keep every point (5-minute steps over minute rollups)', async () => {
    const { body } = await get<{ stepMinutes: number; requests: number[] }>('trends/declarations?from=-3h&step=5m&service=odd');
    expect(body.stepMinutes).toBe(5);
    expect(sum(body.requests)).toBe(4);
    const extensions = (await get<{ extensions: { id: string; negotiated: number[] }[] }>('trends/extensions?from=-3h&step=5m&service=odd')).body;
    expect(sum(extensions.extensions[0]?.negotiated ?? [])).toBe(4);
    const series = (
      await get<{ points: { requests: number; negotiated: number }[] }>(`timeseries?extension=${encodeURIComponent(TASKS)}&from=-3h&step=5m&service=odd`)
    ).body;
    expect(series.points.reduce((total, point) => total + point.requests, 0)).toBe(4);
    expect(series.points.reduce((total, point) => total + point.negotiated, 0)).toBe(4);
  });

  it('chooses a step when none is given, and refuses unknown parameters and too many steps', async () => {
    expect((await get<{ stepMinutes: number }>('trends/declarations?from=-1h')).body.stepMinutes).toBe(1);
    expect((await get<{ stepMinutes: number }>('trends/declarations?from=-24h')).body.stepMinutes).toBe(60);
    expect((await get<{ stepMinutes: number }>('trends/declarations?from=-7d')).body.stepMinutes).toBe(1440);
    const unknown = await get<{ message: string }>('trends/clients?colour=red');
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('colour');
    expect((await get('trends/extensions?from=-7d&step=5m')).status).toBe(400);
    expect((await get('trends/extensions?from=-7d&step=15m')).status).toBe(400);
    expect((await get('trends/extensions?from=-7d&step=6h')).status).toBe(200);
    expect((await get('trends/extensions?from=-30d&step=6h')).status).toBe(400);
  });
});
