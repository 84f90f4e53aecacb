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
import { type MatrixJson, type TestCollector, getJson, matrix, matrixAnswer, startTestCollector, tempDir } from '../helpers/collector.js';
import {
  type Json,
  MINUTE_NS,
  advertisedPoint,
  attribute,
  countPoint,
  extensionPoint,
  metricsRequest,
  msToNs,
  post,
  postMetrics,
  requestPoint,
  tracesRequest,
} from '../helpers/otlp.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const UI = 'io.modelcontextprotocol/ui';
const now = msToNs(Date.now());
const ago = (minutes: number): bigint => now - BigInt(minutes) * MINUTE_NS;

function traffic(instance: string, service: string, client: string, version: string | undefined, count: number, minutesAgo: number): Json {
  const common = { client, ...(version === undefined ? {} : { version }), count, startNs: ago(minutesAgo + 1), timeNs: ago(minutesAgo) };
  return metricsRequest({
    resource: { service, instance },
    requests: [requestPoint({ ...common, declaration: 'declared' }), requestPoint({ ...common, declaration: 'none', count: 1 })],
    extensions: [
      extensionPoint({ ...common, id: TASKS, clientDeclared: true, serverDeclared: true }),
      extensionPoint({ ...common, id: UI, clientDeclared: true, serverDeclared: false }),
      extensionPoint({ ...common, count: count + 1, id: 'com.example/server-only', clientDeclared: false, serverDeclared: true }),
    ],
  });
}

describe('query API', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;

  beforeAll(async () => {
    temp = await tempDir();
    collector = await startTestCollector(temp.dir, { staleAfterMs: 10 * 60_000 });
    const sends = [
      traffic('a-1', 'api', 'alpha', '1.0', 4, 30),
      traffic('a-1', 'api', 'alpha', '2.0', 2, 20),
      traffic('a-2', 'api', 'alpha', '2.0', 3, 10),
      traffic('b-1', 'billing', '=cmd|calc', undefined, 1, 5),
      // What the instances advertise: a-1 and a-2 differ in TASKS' settings, a-2 runs two server variants.
      metricsRequest({
        resource: { service: 'api', instance: 'a-1' },
        advertised: [advertisedPoint({ id: TASKS, fingerprint: 'f-one', timeNs: ago(40) })],
        counts: [countPoint(1, ago(40))],
      }),
      metricsRequest({
        resource: { service: 'api', instance: 'a-1' },
        advertised: [advertisedPoint({ id: TASKS, fingerprint: 'f-one', timeNs: ago(2) }), advertisedPoint({ id: UI, fingerprint: 'f-ui', timeNs: ago(2) })],
        counts: [countPoint(2, ago(2))],
      }),
      metricsRequest({
        resource: { service: 'api', instance: 'a-2' },
        advertised: [
          advertisedPoint({ id: TASKS, fingerprint: 'f-two', timeNs: ago(1) }),
          advertisedPoint({ id: TASKS, fingerprint: 'f-three', timeNs: ago(1), serverName: 'other-server' }),
          advertisedPoint({ id: UI, fingerprint: 'f-ui', timeNs: ago(1) }),
        ],
        counts: [countPoint(2, ago(1)), countPoint(1, ago(1), 'other-server')],
      }),
    ];
    for (const request of sends) expect((await postMetrics(collector.url, request)).status).toBe(200);
  });

  afterAll(async () => {
    await collector.close();
    await temp.cleanup();
  });

  it('matrix by client name: requests, the three declaration states, and per extension declared / advertised / negotiated', async () => {
    const view = await matrixAnswer(collector.url);
    expect(view.resolution).toBe('hour');
    expect(view.extensions).toEqual(['com.example/server-only', TASKS, UI]);
    const alpha = view.rows.find((row) => row.client === 'alpha');
    expect(alpha).toEqual({
      client: 'alpha',
      name: 'alpha',
      version: null,
      requests: 4 + 2 + 3 + 3,
      serverUnknown: 0,
      declaration: { unknown: 0, none: 3, declared: 9 },
      extensions: [
        {
          id: 'com.example/server-only',
          clientDeclared: 0,
          serverAdvertised: 12,
          negotiated: 0,
          serverUnknown: 0,
          required: 0,
          state: 'server',
          known: 12,
          negotiatedShare: 0,
          clientShare: 0,
          serverShare: 1,
        },
        // Negotiated on 9 of 12 requests: partial, not "negotiated".
        {
          id: TASKS,
          clientDeclared: 9,
          serverAdvertised: 9,
          negotiated: 9,
          serverUnknown: 0,
          required: 0,
          state: 'partial',
          known: 12,
          negotiatedShare: 0.75,
          clientShare: 0.75,
          serverShare: 0.75,
        },
        {
          id: UI,
          clientDeclared: 9,
          serverAdvertised: 0,
          negotiated: 0,
          serverUnknown: 0,
          required: 0,
          state: 'client',
          known: 12,
          negotiatedShare: 0,
          clientShare: 0.75,
          serverShare: 0,
        },
      ],
    });
    expect(view.rows[0]?.client).toBe('alpha');
  });

  it('matrix by name@version, filtered by service or instance, at minute resolution for short ranges', async () => {
    const byVersion = await matrixAnswer(collector.url, '&group=client_version&service=api');
    expect(byVersion.rows.map((row) => [row.client, row.requests])).toEqual([
      ['alpha@2.0', 7],
      ['alpha@1.0', 5],
    ]);
    const oneInstance = await getJson<MatrixJson>(`${collector.url}/api/v1/matrix?from=-1h&group=client_version&instance=a-2`);
    expect(oneInstance.body.resolution).toBe('minute');
    expect(oneInstance.body.rows.map((row) => [row.client, row.requests, row.extensions.find((e) => e.id === TASKS)?.negotiated])).toEqual([
      ['alpha@2.0', 4, 3],
    ]);
    const recent = await getJson<MatrixJson>(`${collector.url}/api/v1/matrix?from=-15m`);
    expect(recent.body.rows.map((row) => [row.client, row.requests])).toEqual([
      ['alpha', 4],
      ['=cmd|calc', 2],
    ]);
    const unversioned = await matrixAnswer(collector.url, '&group=client_version&service=billing');
    expect(unversioned.rows.map((row) => [row.client, row.name, row.version])).toEqual([['=cmd|calc@(unknown version)', '=cmd|calc', null]]);
  });

  it('format=csv gives the same table, with formula-like client names neutralised', async () => {
    const response = await fetch(`${collector.url}/api/v1/matrix?from=-7d&format=csv`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const lines = (await response.text()).trim().split('\r\n');
    const columns = (id: string): string =>
      `${id} state,${id} negotiated_share,${id} client_declared,${id} server_advertised,${id} negotiated,${id} required_errors`;
    expect(lines[0]).toBe(
      `client,name,version,requests,server_unknown,declaration_unknown,declaration_none,declaration_declared,${columns('com.example/server-only')},${columns(TASKS)},${columns(UI)}`,
    );
    // The same states and shares as the JSON.
    expect(lines[1]).toBe('alpha,alpha,,12,0,0,3,9,server,0,0,12,0,0,partial,0.75,9,9,9,0,client,0,9,0,0,0');
    expect(lines[2]).toBe("'=cmd|calc,'=cmd|calc,,2,0,0,1,1,server,0,0,2,0,0,partial,0.5,1,1,1,0,client,0,1,0,0,0");
  });

  it('every list endpoint validates its parameters and names the bad one', async () => {
    const cases: [string, RegExp][] = [
      ['/api/v1/matrix?group=server', /querystring\.group must be equal to one of the allowed values \(client, client_version, service, build, instance\)/],
      ['/api/v1/matrix?format=xml', /querystring\.format/],
      ['/api/v1/matrix?from=yesterday', /querystring\.from must match pattern/],
      ['/api/v1/matrix?from=2026-02-31T00:00:00Z', /from: "2026-02-31T00:00:00Z" is not a valid time/],
      ['/api/v1/matrix?to=2026-01-01T24:10Z', /to: .* is not a valid time/],
      ['/api/v1/matrix?from=-1h&to=-2h', /from: must be before to/],
      ['/api/v1/matrix?instnace=a-1', /must NOT have additional properties: instnace/],
      [`/api/v1/matrix?service=${'s'.repeat(300)}`, /querystring\.service must NOT have more than 256 characters/],
      ['/api/v1/timeseries', /must have required property 'extension'/],
      [`/api/v1/timeseries?extension=${TASKS}&step=5x`, /querystring\.step must match pattern/],
      [`/api/v1/timeseries?extension=${TASKS}&from=-7d&step=1m`, /step: 1m gives more than 5000 points/],
      ['/api/v1/instances?service=', /querystring\.service must NOT have fewer than 1 characters/],
      ['/api/v1/clients?to=tomorrow', /querystring\.to must match pattern/],
      ['/api/v1/extensions?limit=3', /additional properties: limit/],
      ['/api/v1/examples?limit=1000', /querystring\.limit must be <= 100/],
    ];
    for (const [path, message] of cases) {
      const { status, body } = await getJson<{ message: string }>(`${collector.url}${path}`);
      expect(status, path).toBe(400);
      expect(body.message, path).toMatch(message);
    }
  });

  it('instances: what each advertises now, its history, settings variants and drift within its service', async () => {
    const { status, body } = await getJson<{ instances: Record<string, unknown>[] }>(`${collector.url}/api/v1/instances`);
    expect(status).toBe(200);
    const byId = new Map(body.instances.map((instance) => [instance['instanceId'], instance]));
    expect([...byId.keys()]).toEqual(['a-1', 'a-2', 'b-1']);
    expect(byId.get('a-1')).toMatchObject({
      service: 'api',
      host: 'host-1',
      stale: false,
      advertises: [
        { id: TASKS, fingerprints: ['f-one'] },
        { id: UI, fingerprints: ['f-ui'] },
      ],
      servers: [
        {
          name: 'test-server',
          version: '1.0.0',
          count: 2,
          extensions: [
            { id: TASKS, fingerprint: 'f-one' },
            { id: UI, fingerprint: 'f-ui' },
          ],
        },
      ],
      settingsVariants: 0,
      differs: true,
      // Settings differ for tasks, 1 vs 1: a split, each side named.
      drift: { role: 'split', lacks: [], extra: [], settingsDiffer: [TASKS], members: 1, live: 2 },
    });
    const history = (byId.get('a-1')?.['history'] ?? []) as { id: string; firstSeen: string; lastSeen: string; current: boolean }[];
    const tasks = history.find((row) => row.id === TASKS);
    expect(tasks).toMatchObject({
      current: true,
      firstSeen: new Date(Number(ago(40) / 1_000_000n)).toISOString(),
      lastSeen: new Date(Number(ago(2) / 1_000_000n)).toISOString(),
    });
    expect(byId.get('a-2')).toMatchObject({
      advertises: [
        { id: TASKS, fingerprints: ['f-three', 'f-two'] },
        { id: UI, fingerprints: ['f-ui'] },
      ],
      settingsVariants: 1,
      differs: true,
    });
    expect((byId.get('a-2')?.['servers'] as unknown[]).length).toBe(2);
    expect(byId.get('b-1')).toMatchObject({ service: 'billing', advertises: [], differs: false, drift: null, advertisedAt: null });
    const filtered = await getJson<{ instances: unknown[] }>(`${collector.url}/api/v1/instances?service=billing`);
    expect(filtered.body.instances).toHaveLength(1);
  });

  it('an extension no longer advertised drops out of "now" but stays in the history', async () => {
    const later = metricsRequest({
      resource: { service: 'api', instance: 'a-2' },
      advertised: [advertisedPoint({ id: UI, fingerprint: 'f-ui', timeNs: ago(0) })],
      counts: [countPoint(1, ago(0))],
    });
    expect((await postMetrics(collector.url, later)).status).toBe(200);
    const { body } = await getJson<{ instances: { instanceId: string; advertises: { id: string }[]; history: { id: string; current: boolean }[] }[] }>(
      `${collector.url}/api/v1/instances?service=api`,
    );
    const a2 = body.instances.find((instance) => instance.instanceId === 'a-2');
    expect(a2?.advertises.map((entry) => entry.id)).toEqual([UI]);
    expect(a2?.history.filter((row) => row.id === TASKS).map((row) => row.current)).toEqual([false, false]);
  });

  it('timeseries: requests and negotiated share per step', async () => {
    const { status, body } = await getJson<{
      stepMinutes: number;
      points: { t: string; requests: number; negotiated: number; negotiatedShare: number | null }[];
    }>(`${collector.url}/api/v1/timeseries?extension=${encodeURIComponent(TASKS)}&from=-1h&step=1m&service=api`);
    expect(status).toBe(200);
    expect(body.stepMinutes).toBe(1);
    const nonEmpty = body.points.filter((point) => point.requests > 0);
    expect(nonEmpty.map((point) => [point.requests, point.negotiated, point.negotiatedShare])).toEqual([
      [5, 4, 0.8],
      [3, 2, 2 / 3],
      [4, 3, 0.75],
    ]);
    expect(body.points.filter((point) => point.requests === 0).every((point) => point.negotiatedShare === null)).toBe(true);
    const hourly = await getJson<{ stepMinutes: number; points: { requests: number; negotiated: number }[] }>(
      `${collector.url}/api/v1/timeseries?extension=${encodeURIComponent(TASKS)}&from=-1d&step=1h`,
    );
    const sum = hourly.body.points.reduce((total, point) => total + point.requests, 0);
    expect(sum).toBe(14);
    expect(hourly.body.points.reduce((total, point) => total + point.negotiated, 0)).toBe(10);
  });

  it('timeseries: a step of several minutes counts every minute inside it', async () => {
    const { body } = await getJson<{ stepMinutes: number; points: { requests: number; negotiated: number }[] }>(
      `${collector.url}/api/v1/timeseries?extension=${encodeURIComponent(TASKS)}&from=-1h&step=5m&service=api`,
    );
    expect(body.stepMinutes).toBe(5);
    expect(body.points.reduce((total, point) => total + point.requests, 0)).toBe(5 + 3 + 4);
    expect(body.points.reduce((total, point) => total + point.negotiated, 0)).toBe(4 + 2 + 3);
  });

  it('clients and extensions list what was seen', async () => {
    const clients = await getJson<{ clients: { client: string; requests: number }[] }>(`${collector.url}/api/v1/clients?from=-7d`);
    expect(clients.body.clients.map((c) => [c.client, c.requests])).toEqual([
      ['=cmd|calc@(unknown version)', 2],
      ['alpha@1.0', 5],
      ['alpha@2.0', 7],
    ]);
    const extensions = await getJson<{ extensions: { id: string; negotiated: number }[] }>(`${collector.url}/api/v1/extensions?from=-7d&service=api`);
    expect(extensions.body.extensions.map((e) => [e.id, e.negotiated])).toEqual([
      ['com.example/server-only', 0],
      [TASKS, 9],
      [UI, 0],
    ]);
  });

  it('examples: spans become a bounded set of recent example requests per matrix cell', async () => {
    const span = (index: number, client: string, ids: string[]) => ({
      traceId: index.toString(16).padStart(32, '0'),
      spanId: (index + 1).toString(16).padStart(16, '0'),
      startNs: ago(1) + BigInt(index) * 1_000_000n,
      endNs: ago(1) + BigInt(index) * 1_000_000n + 2_500_000n,
      attributes: [
        attribute(ATTR_MCP_METHOD_NAME, 'tools/call'),
        attribute(ATTR_CLIENT_NAME, client),
        attribute(ATTR_CLIENT_VERSION, '2.0'),
        attribute(ATTR_CLIENT_DECLARATION, 'declared'),
        attribute(ATTR_OUTCOME, 'complete'),
        { key: ATTR_CLIENT_EXTENSIONS, value: { arrayValue: { values: ids.map((id) => ({ stringValue: id })) } } },
        { key: ATTR_SERVER_EXTENSIONS, value: { arrayValue: { values: [{ stringValue: TASKS }] } } },
        { key: ATTR_NEGOTIATED_EXTENSIONS, value: { arrayValue: { values: ids.filter((id) => id === TASKS).map((id) => ({ stringValue: id })) } } },
      ],
    });
    const spans = Array.from({ length: 8 }, (_, index) => span(index, 'alpha', index % 2 === 0 ? [TASKS] : [UI]));
    const internal = { ...span(99, 'alpha', []), kind: 1 };
    const tooLong = { ...span(98, 'x'.repeat(1000), []) };
    const request = tracesRequest({ service: 'api', instance: 'a-1' }, [...spans, internal, tooLong]);
    const response = await post(collector.url, '/v1/traces', request, { format: 'json' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      partialSuccess: { rejectedSpans: '1', errorMessage: expect.stringMatching(/extscope\.client\.name is 1000 characters/) },
    });
    expect((await post(collector.url, '/v1/traces', request)).status).toBe(200);

    const row = await getJson<{ examples: { spanId: string; durationMs: number; negotiated: string[] }[] }>(
      `${collector.url}/api/v1/examples?client=alpha&version=2.0`,
    );
    expect(row.body.examples).toHaveLength(5);
    expect(row.body.examples[0]).toMatchObject({ spanId: (8).toString(16).padStart(16, '0'), durationMs: 2.5 });
    const cell = await getJson<{ examples: { spanId: string; negotiated: string[] }[] }>(
      `${collector.url}/api/v1/examples?client=alpha&extension=${encodeURIComponent(UI)}`,
    );
    expect(cell.body.examples.map((example) => example.spanId)).toEqual([8, 6, 4, 2].map((n) => n.toString(16).padStart(16, '0')));
    expect(cell.body.examples.every((example) => example.negotiated.length === 0)).toBe(true);
    // Examples never feed counts.
    expect((await matrix(collector.url, '&service=api')).rows.find((r) => r.client === 'alpha')?.requests).toBe(12);
  });
});
