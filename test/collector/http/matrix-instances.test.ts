import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCollector, getJson, matrixAnswer, startTestCollector, tempDir } from '../helpers/collector.js';
import {
  type ExtensionSpec,
  type Json,
  MINUTE_NS,
  type RequestSpec,
  extensionPoint,
  metricsRequest,
  msToNs,
  postMetrics,
  requestPoint,
} from '../helpers/otlp.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const now = msToNs(Date.now());
const ago = (minutes: number): bigint => now - BigInt(minutes) * MINUTE_NS;

interface CellJson {
  id: string;
  clientDeclared: number;
  serverAdvertised: number;
  negotiated: number;
  serverUnknown: number;
  required: number;
  state: string;
  known: number;
  negotiatedShare: number | null;
  clientShare: number | null;
  serverShare: number | null;
}

interface RowJson {
  client: string;
  name: string | null;
  version: string | null;
  service?: string | null;
  instance?: string | null;
  requests: number;
  serverUnknown: number;
  declaration: { unknown: number; none: number; declared: number };
  extensions: CellJson[];
}

interface MatrixAnswer {
  group: string;
  resolution: string;
  extensions: string[];
  rows: RowJson[];
  totals: CellJson[];
  rowsTotal: number;
}

interface SplitAnswer {
  extension: string;
  resolution: string;
  instancesTotal: number;
  instances: { service: string | null; instance: string | null; label: string; requests: number; serverUnknown: number; cell: CellJson }[];
  other: { instances: number; requests: number; serverUnknown: number; cell: CellJson } | null;
}

/** One instance's export: request points and extension points sharing one window. */
function exportOf(
  service: string,
  instance: string,
  minutesAgo: number,
  requests: Omit<RequestSpec, 'startNs' | 'timeNs'>[],
  extensions: Omit<ExtensionSpec, 'startNs' | 'timeNs'>[],
): Json {
  const window = { startNs: ago(minutesAgo + 1), timeNs: ago(minutesAgo) };
  return metricsRequest({
    resource: { service, instance },
    requests: requests.map((spec) => requestPoint({ ...spec, ...window })),
    extensions: extensions.map((spec) => extensionPoint({ ...spec, ...window })),
  });
}

const alpha = { client: 'alpha', version: '1.0' } as const;

/**
 * Service `shop` as two instances: s-1 advertises TASKS and SEARCH, s-2 only TASKS (and answered 2 requests before
 * any server instance existed, and one `-32021` naming SEARCH); service `docs` as one instance d-1, whose client
 * `beta` declares nothing. Client `alpha` declares both ids on every request.
 */
const FLEET: Json[] = [
  exportOf(
    'shop',
    's-1',
    12,
    [{ ...alpha, count: 5 }],
    [
      { ...alpha, count: 5, id: TASKS, clientDeclared: true, serverDeclared: true },
      { ...alpha, count: 5, id: SEARCH, clientDeclared: true, serverDeclared: true },
    ],
  ),
  exportOf(
    'shop',
    's-2',
    10,
    [
      { ...alpha, count: 3 },
      { ...alpha, count: 2, serverDeclaration: 'unknown' },
    ],
    [
      { ...alpha, count: 3, id: TASKS, clientDeclared: true, serverDeclared: true },
      { ...alpha, count: 2, id: TASKS, clientDeclared: true, serverDeclared: false, serverDeclaration: 'unknown' },
      { ...alpha, count: 2, id: SEARCH, clientDeclared: true, serverDeclared: false },
      { ...alpha, count: 1, id: SEARCH, clientDeclared: true, serverDeclared: false, required: true, outcome: 'error' },
      { ...alpha, count: 2, id: SEARCH, clientDeclared: true, serverDeclared: false, serverDeclaration: 'unknown' },
    ],
  ),
  exportOf(
    'docs',
    'd-1',
    8,
    [{ client: 'beta', version: '2.0', declaration: 'none', count: 4 }],
    [{ client: 'beta', version: '2.0', declaration: 'none', count: 4, id: TASKS, clientDeclared: false, serverDeclared: true }],
  ),
];

const cell = (id: string, counts: Partial<CellJson>): CellJson => ({
  id,
  clientDeclared: 0,
  serverAdvertised: 0,
  negotiated: 0,
  serverUnknown: 0,
  required: 0,
  state: 'neither',
  known: 0,
  negotiatedShare: null,
  clientShare: null,
  serverShare: null,
  ...counts,
});

// What each instance's cells are: the same semantics as a client row's (analysis/cell.ts).
const S1 = {
  requests: 5,
  serverUnknown: 0,
  tasks: cell(TASKS, {
    clientDeclared: 5,
    serverAdvertised: 5,
    negotiated: 5,
    state: 'negotiated',
    known: 5,
    negotiatedShare: 1,
    clientShare: 1,
    serverShare: 1,
  }),
};
const S1_SEARCH = cell(SEARCH, {
  clientDeclared: 5,
  serverAdvertised: 5,
  negotiated: 5,
  state: 'negotiated',
  known: 5,
  negotiatedShare: 1,
  clientShare: 1,
  serverShare: 1,
});
// 5 requests, 2 answered before any server instance existed: shares over the 3 others.
const S2_TASKS = cell(TASKS, {
  clientDeclared: 5,
  serverAdvertised: 3,
  negotiated: 3,
  serverUnknown: 2,
  state: 'negotiated',
  known: 3,
  negotiatedShare: 1,
  clientShare: 1,
  serverShare: 1,
});
const S2_SEARCH = cell(SEARCH, {
  clientDeclared: 5,
  serverUnknown: 2,
  required: 1,
  state: 'client',
  known: 3,
  negotiatedShare: 0,
  clientShare: 1,
  serverShare: 0,
});

describe('matrix by service and by instance', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;

  beforeAll(async () => {
    temp = await tempDir();
    collector = await startTestCollector(temp.dir);
    for (const request of FLEET) expect((await postMetrics(collector.url, request)).status).toBe(200);
  });

  afterAll(async () => {
    await collector.close();
    await temp.cleanup();
  });

  it('group=instance: one row per service + instance id, each with its own negotiated counts, states and shares', async () => {
    const view = await matrixAnswer<MatrixAnswer>(collector.url, '&group=instance');
    expect(view.group).toBe('instance');
    expect(view.extensions).toEqual([SEARCH, TASKS]);
    expect(view.rowsTotal).toBe(3);
    expect(view.rows).toEqual([
      {
        client: 'shop / s-1',
        name: null,
        version: null,
        service: 'shop',
        instance: 's-1',
        requests: 5,
        serverUnknown: 0,
        declaration: { unknown: 0, none: 0, declared: 5 },
        extensions: [S1_SEARCH, S1.tasks],
      },
      {
        client: 'shop / s-2',
        name: null,
        version: null,
        service: 'shop',
        instance: 's-2',
        requests: 5,
        serverUnknown: 2,
        declaration: { unknown: 0, none: 0, declared: 5 },
        extensions: [S2_SEARCH, S2_TASKS],
      },
      {
        client: 'docs / d-1',
        name: null,
        version: null,
        service: 'docs',
        instance: 'd-1',
        requests: 4,
        serverUnknown: 0,
        declaration: { unknown: 0, none: 4, declared: 0 },
        extensions: [
          cell(SEARCH, { known: 4, negotiatedShare: 0, clientShare: 0, serverShare: 0 }),
          cell(TASKS, { serverAdvertised: 4, state: 'server', known: 4, negotiatedShare: 0, clientShare: 0, serverShare: 1 }),
        ],
      },
    ]);
  });

  it('group=service sums its instances, with the same cells as the client grouping over that service', async () => {
    const view = await matrixAnswer<MatrixAnswer>(collector.url, '&group=service');
    expect(view.rows.map((row) => [row.client, row.service, row.instance, row.requests, row.serverUnknown])).toEqual([
      ['shop', 'shop', undefined, 10, 2],
      ['docs', 'docs', undefined, 4, 0],
    ]);
    const shop = view.rows[0];
    // SEARCH negotiated on 5 of the 8 requests whose server is known: partial.
    expect(shop?.extensions).toEqual([
      cell(SEARCH, {
        clientDeclared: 10,
        serverAdvertised: 5,
        negotiated: 5,
        serverUnknown: 2,
        required: 1,
        state: 'partial',
        known: 8,
        negotiatedShare: 0.625,
        clientShare: 1,
        serverShare: 0.625,
      }),
      cell(TASKS, {
        clientDeclared: 10,
        serverAdvertised: 8,
        negotiated: 8,
        serverUnknown: 2,
        state: 'negotiated',
        known: 8,
        negotiatedShare: 1,
        clientShare: 1,
        serverShare: 1,
      }),
    ]);
    // Only alpha sends to shop: its client row over service=shop is the same cells, read from the other rollups.
    const byClient = await matrixAnswer<MatrixAnswer>(collector.url, '&group=client&service=shop');
    expect(byClient.rows.map((row) => row.client)).toEqual(['alpha']);
    expect(byClient.rows[0]?.extensions).toEqual(shop?.extensions);
    expect(byClient.totals).toEqual(shop?.extensions);
  });

  it("filters narrow the instance rows: service, instance, and client (that client's requests only)", async () => {
    const shop = await matrixAnswer<MatrixAnswer>(collector.url, '&group=instance&service=shop');
    expect(shop.rows.map((row) => row.client)).toEqual(['shop / s-1', 'shop / s-2']);
    const one = await matrixAnswer<MatrixAnswer>(collector.url, '&group=instance&instance=s-2');
    expect(one.rows.map((row) => [row.client, row.requests])).toEqual([['shop / s-2', 5]]);
    const beta = await matrixAnswer<MatrixAnswer>(collector.url, '&group=service&client=beta');
    expect(beta.rows.map((row) => [row.client, row.requests, row.declaration.none])).toEqual([['docs', 4, 4]]);
    const labelled = await matrixAnswer<MatrixAnswer>(collector.url, '&group=instance&rows=s-2&cols=search');
    expect(labelled.extensions).toEqual([SEARCH]);
    expect(labelled.rows.map((row) => [row.client, row.extensions])).toEqual([['shop / s-2', [S2_SEARCH]]]);
    const limited = await matrixAnswer<MatrixAnswer>(collector.url, '&group=instance&limit=2');
    expect(limited.rows.map((row) => [row.client, row.service, row.instance, row.requests])).toEqual([
      ['shop / s-1', 'shop', 's-1', 5],
      ['_OTHER', '_OTHER', '_OTHER', 9],
    ]);
  });

  it('format=csv names the service and instance of each row', async () => {
    const response = await fetch(`${collector.url}/api/v1/matrix?from=-7d&group=instance&format=csv&cols=search`);
    expect(response.status).toBe(200);
    const lines = (await response.text()).trim().split('\r\n');
    const columns = `${SEARCH} state,${SEARCH} negotiated_share,${SEARCH} client_declared,${SEARCH} server_advertised,${SEARCH} negotiated,${SEARCH} required_errors`;
    expect(lines).toEqual([
      `service,instance,requests,server_unknown,declaration_unknown,declaration_none,declaration_declared,${columns}`,
      'shop,s-1,5,0,0,0,5,negotiated,1,5,5,5,0',
      'shop,s-2,5,2,0,0,5,client,0,5,0,0,1',
      'docs,d-1,4,0,0,4,0,neither,0,0,0,0,0',
    ]);
    const byService = await (await fetch(`${collector.url}/api/v1/matrix?from=-7d&group=service&format=csv&cols=tasks`)).text();
    expect(byService.split('\r\n').slice(0, 2)).toEqual([
      `service,requests,server_unknown,declaration_unknown,declaration_none,declaration_declared,${TASKS} state,${TASKS} negotiated_share,${TASKS} client_declared,${TASKS} server_advertised,${TASKS} negotiated,${TASKS} required_errors`,
      'shop,10,2,0,0,10,negotiated,1,10,8,8,0',
    ]);
  });

  it("GET /matrix/cell splits a client's cell across the instances that answered it, the parts adding up to the cell", async () => {
    const split = await getJson<SplitAnswer>(`${collector.url}/api/v1/matrix/cell?from=-7d&client=alpha&extension=${encodeURIComponent(SEARCH)}`);
    expect(split.status).toBe(200);
    expect(split.body.extension).toBe(SEARCH);
    expect(split.body.instancesTotal).toBe(2);
    expect(split.body.other).toBeNull();
    expect(split.body.instances).toEqual([
      { service: 'shop', instance: 's-1', label: 'shop / s-1', requests: 5, serverUnknown: 0, cell: S1_SEARCH },
      { service: 'shop', instance: 's-2', label: 'shop / s-2', requests: 5, serverUnknown: 2, cell: S2_SEARCH },
    ]);
    const matrix = await matrixAnswer<MatrixAnswer>(collector.url, '&group=client');
    const whole = matrix.rows.find((row) => row.client === 'alpha')?.extensions.find((entry) => entry.id === SEARCH);
    const sum = (key: 'clientDeclared' | 'serverAdvertised' | 'negotiated' | 'serverUnknown' | 'required'): number =>
      split.body.instances.reduce((total, part) => total + part.cell[key], 0);
    expect([sum('clientDeclared'), sum('serverAdvertised'), sum('negotiated'), sum('serverUnknown'), sum('required')]).toEqual([
      whole?.clientDeclared,
      whole?.serverAdvertised,
      whole?.negotiated,
      whole?.serverUnknown,
      whole?.required,
    ]);
    // A version that the client never sent has no instance; a service row's cell splits over its instances.
    const none = await getJson<SplitAnswer>(`${collector.url}/api/v1/matrix/cell?from=-7d&client=alpha&version=9.9&extension=${encodeURIComponent(SEARCH)}`);
    expect([none.body.instancesTotal, none.body.instances]).toEqual([0, []]);
    const docs = await getJson<SplitAnswer>(`${collector.url}/api/v1/matrix/cell?from=-7d&service=docs&extension=${encodeURIComponent(TASKS)}`);
    expect(docs.body.instances.map((part) => [part.label, part.requests, part.cell.serverAdvertised, part.cell.state])).toEqual([
      ['docs / d-1', 4, 4, 'server'],
    ]);
  });

  it('GET /matrix/cell lists the busiest `limit` instances and sums the rest', async () => {
    const split = await getJson<SplitAnswer>(`${collector.url}/api/v1/matrix/cell?from=-7d&service=shop&extension=${encodeURIComponent(SEARCH)}&limit=1`);
    expect(split.body.instances.map((part) => part.label)).toEqual(['shop / s-1']);
    expect(split.body.instancesTotal).toBe(2);
    expect(split.body.other).toEqual({ instances: 1, requests: 5, serverUnknown: 2, cell: S2_SEARCH });
  });

  it('refuses bad parameters by name, and changes nothing', async () => {
    const cases: [string, RegExp][] = [
      ['/api/v1/matrix?group=server', /querystring\.group must be equal to one of the allowed values \(client, client_version, service, build, instance\)/],
      ['/api/v1/matrix/cell?client=alpha', /must have required property 'extension'/],
      ['/api/v1/matrix/cell?extension=a/b&limit=0', /querystring\.limit must be >= 1/],
      ['/api/v1/matrix/cell?extension=a/b&limit=501', /querystring\.limit must be <= 500/],
      ['/api/v1/matrix/cell?extension=a/b&group=instance', /must NOT have additional properties: group/],
      ['/api/v1/matrix/cell?extension=a/b&from=-1h&to=-2h', /from: must be before to/],
    ];
    for (const [path, message] of cases) {
      const { status, body } = await getJson<{ message: string }>(`${collector.url}${path}`);
      expect([path, status]).toEqual([path, 400]);
      expect(body.message).toMatch(message);
    }
    const view = await matrixAnswer<MatrixAnswer>(collector.url, '&group=instance');
    expect(view.rows.map((row) => row.requests)).toEqual([5, 5, 4]);
  });
});

describe('matrix by instance over a large fleet', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  const INSTANCES = 25;

  beforeAll(async () => {
    temp = await tempDir();
    // Room for the fleet's 50 instance cell totals, not for more: the read budget applies to these reads too.
    collector = await startTestCollector(temp.dir, { limits: { maxScannedCells: 60 } });
    for (let index = 0; index < INSTANCES; index++) {
      // Instance i answers i + 1 requests, each negotiating TASKS on the even instances only.
      const count = index + 1;
      const advertised = index % 2 === 0;
      const request = exportOf(
        'fleet',
        `f-${String(index).padStart(2, '0')}`,
        5,
        [{ ...alpha, count }],
        [{ ...alpha, count, id: TASKS, clientDeclared: true, serverDeclared: advertised }],
      );
      expect((await postMetrics(collector.url, request)).status).toBe(200);
    }
  });

  afterAll(async () => {
    await collector.close();
    await temp.cleanup();
  });

  it('the split lists the 20 busiest instances by default and sums the other 5, which add up to the cell', async () => {
    const split = await getJson<SplitAnswer>(`${collector.url}/api/v1/matrix/cell?from=-1h&client=alpha&extension=${encodeURIComponent(TASKS)}`);
    expect(split.status).toBe(200);
    expect(split.body.resolution).toBe('minute');
    expect(split.body.instancesTotal).toBe(INSTANCES);
    expect(split.body.instances.map((part) => [part.instance, part.requests, part.cell.negotiated])).toEqual(
      Array.from({ length: 20 }, (_, rank) => {
        const index = INSTANCES - 1 - rank;
        return [`f-${String(index).padStart(2, '0')}`, index + 1, index % 2 === 0 ? index + 1 : 0];
      }),
    );
    // f-00..f-04: 1+2+3+4+5 requests, negotiated on f-00, f-02, f-04 (1+3+5).
    expect(split.body.other).toEqual({
      instances: 5,
      requests: 15,
      serverUnknown: 0,
      cell: cell(TASKS, {
        clientDeclared: 15,
        serverAdvertised: 9,
        negotiated: 9,
        state: 'partial',
        known: 15,
        negotiatedShare: 0.6,
        clientShare: 1,
        serverShare: 0.6,
      }),
    });
    const matrix = await matrixAnswer<MatrixAnswer>(collector.url);
    const whole = matrix.rows[0]?.extensions.find((entry) => entry.id === TASKS);
    const negotiated = split.body.instances.reduce((total, part) => total + part.cell.negotiated, 0) + (split.body.other?.cell.negotiated ?? 0);
    expect(negotiated).toBe(whole?.negotiated);
  });

  it('a read scanning more instance cells than the read budget allows is refused, naming the limit', async () => {
    // 25 instances × (1 request cell + 1 extension cell) = 50 fit. A second client on every instance adds no instance
    // cell (they sum the clients), one that declared nothing does: a request cell of another declaration state.
    for (let index = 0; index < INSTANCES; index++) {
      const request = exportOf('fleet', `f-${String(index).padStart(2, '0')}`, 4, [{ client: 'gamma', count: 1 }], []);
      expect((await postMetrics(collector.url, request)).status).toBe(200);
    }
    expect((await getJson(`${collector.url}/api/v1/matrix?from=-1h&group=instance`)).status).toBe(200);
    for (let index = 0; index < INSTANCES; index++) {
      const request = exportOf('fleet', `f-${String(index).padStart(2, '0')}`, 3, [{ client: 'delta', declaration: 'none', count: 1 }], []);
      expect((await postMetrics(collector.url, request)).status).toBe(200);
    }
    for (const path of ['/api/v1/matrix?from=-1h&group=instance', `/api/v1/matrix/cell?from=-1h&extension=${encodeURIComponent(TASKS)}`]) {
      const { status, body } = await getJson<{ message: string }>(`${collector.url}${path}`);
      expect([path, status]).toEqual([path, 400]);
      expect(body.message).toMatch(/the range holds 75 cell totals, more than one read may scan \(60, EXTSCOPE_MAX_READ_CELLS\)/);
    }
    // Narrowed to one client, the same read fits.
    const narrowed = await getJson<SplitAnswer>(`${collector.url}/api/v1/matrix/cell?from=-1h&client=alpha&extension=${encodeURIComponent(TASKS)}`);
    expect(narrowed.status).toBe(200);
  });
});

describe('the split of rows without a client name or version', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;

  beforeAll(async () => {
    temp = await tempDir();
    collector = await startTestCollector(temp.dir);
    const sends = [
      // On m-1: 2 requests naming no client, 1 of alpha without a version, 4 of alpha 1.0; on m-2: 3 naming no client.
      exportOf(
        'misc',
        'm-1',
        6,
        [{ count: 2 }, { client: 'alpha', count: 1 }, { ...alpha, count: 4 }],
        [
          { count: 2, id: TASKS, clientDeclared: true, serverDeclared: true },
          { client: 'alpha', count: 1, id: TASKS, clientDeclared: true, serverDeclared: true },
          { ...alpha, count: 4, id: TASKS, clientDeclared: true, serverDeclared: true },
        ],
      ),
      exportOf('misc', 'm-2', 6, [{ count: 3 }], [{ count: 3, id: TASKS, clientDeclared: true, serverDeclared: false }]),
    ];
    for (const request of sends) expect((await postMetrics(collector.url, request)).status).toBe(200);
  });

  afterAll(async () => {
    await collector.close();
    await temp.cleanup();
  });

  const split = async (query: string): Promise<{ status: number; body: SplitAnswer & { message?: string } }> =>
    getJson<SplitAnswer & { message?: string }>(`${collector.url}/api/v1/matrix/cell?from=-1h&extension=${encodeURIComponent(TASKS)}${query}`);

  it('unnamed=true splits the (unknown client) row; unversioned=true the name@(unknown version) row', async () => {
    const unnamed = await split('&unnamed=true');
    expect(unnamed.body.instances.map((part) => [part.label, part.requests, part.cell.negotiated, part.cell.state])).toEqual([
      ['misc / m-2', 3, 0, 'client'],
      ['misc / m-1', 2, 2, 'negotiated'],
    ]);
    const unversioned = await split('&client=alpha&unversioned=true');
    expect(unversioned.body.instances.map((part) => [part.label, part.requests, part.cell.negotiated])).toEqual([['misc / m-1', 1, 1]]);
    const versioned = await split('&client=alpha&version=1.0');
    expect(versioned.body.instances.map((part) => [part.label, part.requests])).toEqual([['misc / m-1', 4]]);
    // The matrix rows they split, by client name@version.
    const matrix = await matrixAnswer<MatrixAnswer>(collector.url, '&group=client_version');
    expect(matrix.rows.map((row) => [row.client, row.requests])).toEqual([
      ['(unknown client)@(unknown version)', 5],
      ['alpha@1.0', 4],
      ['alpha@(unknown version)', 1],
    ]);
  });

  it('unnamed with a client, or unversioned without one (or with a version), is a 400 that names it', async () => {
    for (const [query, message] of [
      ['&unnamed=true&client=alpha', /^unnamed: /],
      ['&unversioned=true', /^unversioned: needs a client/],
      ['&unversioned=true&client=alpha&version=1.0', /^unversioned: needs a client, and no version/],
    ] as const) {
      const answer = await split(query);
      expect([query, answer.status]).toEqual([query, 400]);
      expect(answer.body.message).toMatch(message);
    }
  });
});
