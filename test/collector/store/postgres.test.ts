import pg from 'pg';
import { findMigrationsDir, loadMigrations } from '../../../collector/store/common/migrations.js';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { type CounterPoint, type MetricsBatch, SeriesKind, Temporality } from '../../../collector/model/batches.js';
import { MS_PER_MINUTE, msToNanos } from '../../../collector/model/time.js';
import { type Statement, createPool, inBatchedTransaction, inTransaction, redactUrl } from '../../../collector/store/postgres/connection.js';
import { openPostgresStore } from '../../../collector/store/postgres/index.js';
import { SchemaTooNewError, type StoreRoles, StoreUnavailableError } from '../../../collector/store/store.js';
import { httpStatusOf } from '../../../collector/model/errors.js';
import type { MetricsOutcome } from '../../../collector/model/consumer.js';
import { ExtensionIdLimit } from '../../../collector/processor/extension-id-limit/index.js';
import { deliveryLogConformance } from '../alerting/delivery/delivery-log-conformance.js';
import { type StoreBackend, storeConformance } from './conformance.js';
import { testDatabases } from './postgres-server.js';
import { readMatrix } from '../../../collector/analysis/read-matrix.js';
import { FoldSchedule } from '../../../collector/store/common/fold-schedule.js';
import { PostgresFolder } from '../../../collector/store/postgres/fold.js';
import { FoldedReads } from '../../../collector/store/postgres/folded-reads.js';

storeConformance('PostgreSQL', (): StoreBackend => {
  const databases = testDatabases('conf');
  return {
    place: () => databases.create(),
    open: (url, options) => openPostgresStore({ url, ...options }),
    cleanup: () => databases.dropAll(),
    async closedGeneration(url) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ value: string }>("SELECT value FROM meta WHERE key = 'closed_generation'");
        return Number(rows[0]?.value ?? 0);
      } finally {
        await client.end();
      }
    },
  };
});

deliveryLogConformance('PostgreSQL', () => {
  const databases = testDatabases('deliveries');
  return {
    open: async (clock, hourDays) =>
      openPostgresStore({ url: await databases.create(), clock, retention: { minuteDays: 2, hourDays, dedupHours: 6 }, examplesPerCell: 5 }),
    cleanup: () => databases.dropAll(),
  };
});

const T0 = Date.UTC(2026, 2, 2, 10, 0);
const RETENTION = { minuteDays: 2, hourDays: 10, dedupHours: 6 };
const open = (url: string): Promise<StoreRoles> => openPostgresStore({ url, clock: () => T0 + 30 * MS_PER_MINUTE, retention: RETENTION, examplesPerCell: 2 });

/** One request stream per client name, as the processors would hand it over. */
function point(client: string, temporality: Temporality, start: number, time: number, value: number): CounterPoint {
  const dims = {
    kind: SeriesKind.Requests,
    serverName: 'server',
    serverVersion: '1.0',
    method: 'tools/call',
    era: 'modern',
    protocolVersion: '2026-07-28',
    clientName: client,
    clientVersion: '1.0',
    clientDeclaration: 'declared',
    serverDeclaration: 'declared',
    outcome: 'complete',
    statusCode: null,
    extensionId: null,
    clientDeclared: null,
    serverDeclared: null,
    negotiated: null,
    required: null,
  } as const;
  return {
    dims,
    streamScope: `resource\u0000scope\u0000${temporality}`,
    streamAttributes: JSON.stringify(dims),
    schema1Attributes: '',
    temporality,
    startNs: msToNanos(T0 + start * MS_PER_MINUTE),
    timeNs: msToNanos(T0 + time * MS_PER_MINUTE),
    value,
  };
}

function batch(points: CounterPoint[], instance = 'i-1'): MetricsBatch {
  const resource = {
    service: 'svc',
    instanceId: instance,
    serviceVersion: '2.0',
    host: 'h',
    serverName: 'server',
    serverVersion: '1.0',
    transport: null,
    deploymentEnvironment: null,
    k8sNamespace: null,
    k8sDeployment: null,
    canonical: instance,
    key: instance,
    instanceDerived: false,
  };
  return { resources: [{ resource, counters: points, advertised: [], advertisedCounts: [] }], ignored: new Map(), rejections: [], rejectedReason: undefined };
}

async function totals(store: StoreRoles): Promise<Record<string, number>> {
  const { cells } = await store.reader.cellTotals({ fromMs: T0 - MS_PER_MINUTE * 60 * 24, toMs: T0 + MS_PER_MINUTE * 60 * 24 });
  return Object.fromEntries(cells.map((cell) => [cell.clientName ?? 'null', cell.count]).sort());
}

describe('PostgreSQL store with several collectors on one database', () => {
  const databases = testDatabases('replicas');
  afterAll(() => databases.dropAll());

  it('collectors starting together migrate once, under the lock, and agree on the schema', async () => {
    const url = await databases.create();
    const stores = await Promise.all([open(url), open(url), open(url)]);
    const healths = await Promise.all(stores.map((store) => store.lifecycle.health()));
    const latest = loadMigrations(findMigrationsDir('postgres')).length;
    expect(latest).toBeGreaterThanOrEqual(8);
    expect(healths.map((health) => [health.writable, health.schemaVersion])).toEqual([
      [true, latest],
      [true, latest],
      [true, latest],
    ]);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((row: { version: number }) => row.version)).toEqual(Array.from({ length: latest }, (_, index) => index + 1));
    await client.query("INSERT INTO schema_migrations (version, name, checksum) VALUES (99, 'from_the_future', 'x')");
    await client.end();
    await Promise.all(stores.map((store) => store.lifecycle.close()));
    await expect(open(url)).rejects.toBeInstanceOf(SchemaTooNewError);
  });

  it('concurrent exports through different collectors, cumulative and retried, in opposite stream orders, are counted exactly', async () => {
    const url = await databases.create();
    const stores = await Promise.all([open(url), open(url), open(url)]);
    const clients = ['a', 'b', 'c', 'd', 'e', 'f'];
    const exports: MetricsBatch[] = [];
    // Cumulative totals 1, 2, …, 20 per client (so 20 each), consecutive exports in the same order or reversed.
    for (let minute = 1; minute <= 20; minute++) {
      const order = minute % 2 === 0 ? clients : [...clients].reverse();
      exports.push(batch(order.map((client) => point(client, Temporality.Cumulative, 0, minute, minute))));
      // And a delta point per minute for 'delta', each export sent three times.
      const delta = batch([point('delta', Temporality.Delta, minute - 1, minute, 2)], 'i-2');
      exports.push(delta, delta, delta);
    }
    // Every export goes to every collector at once: the worst case of retries landing elsewhere.
    const results = await Promise.all(exports.flatMap((exported) => stores.map((store) => store.ingest.applyMetrics(exported))));
    expect(results.every((result) => result.applied + result.duplicates > 0)).toBe(true);
    const expected = { ...Object.fromEntries(clients.map((client) => [client, 20])), delta: 40 };
    for (const store of stores) expect(await totals(store)).toEqual(expected);
    await Promise.all(stores.map((store) => store.lifecycle.close()));
  });

  it("a read's statements go in one round trip with the fold while exports come, and with a look for pending increments once a read found none: a matrix read sees another collector's export at once", async () => {
    const url = await databases.create();
    const [writer, reader] = await Promise.all([open(url), open(url)]);
    const range = { fromMs: T0 - MS_PER_MINUTE * 60 * 24, toMs: T0 + MS_PER_MINUTE * 60 };
    // What each connection sends while `read` runs: a batch of the read's statements with what goes ahead of them
    // (the fold, the look for pending increments, or nothing), or another statement (the schedule's fold).
    const sent = async (read: () => Promise<unknown>): Promise<string[]> => {
      const spy = vi.spyOn(pg.Client.prototype, 'query');
      try {
        await read();
        return spy.mock.calls.map(([query]) => {
          const { ahead, statements } = query as { ahead?: { name: string }; statements?: unknown[] };
          return statements === undefined ? 'other' : `${ahead?.name ?? 'alone'} + ${statements.length}`;
        });
      } finally {
        spy.mockRestore();
      }
    };
    let expected = 0;
    const matrix = async () => {
      const { view } = await readMatrix(reader.reader, range, 'client');
      expect(view.rows.map((row) => [row.client, row.requests])).toEqual([['a', expected]]);
    };
    // Once the range's closed part is kept: which buckets are closed, the open part's cells and those answered before
    // any server existed, and the -32021 trend: four statements in one round trip.
    const folding = ['extscope-fold-before-read + 4'];
    const looking = ['extscope-pending-before-read + 4'];
    try {
      // A reader that has not yet found nothing pending folds what is pending in its first batch's round trip (which
      // buckets are closed and the trend); the closed part is then read, and the open part.
      await writer.ingest.applyMetrics(batch([point('a', Temporality.Delta, 0, 1, 5)]));
      expected += 5;
      expect(await sent(matrix)).toEqual(['extscope-fold-before-read + 2', 'extscope-fold-before-read + 2', 'extscope-pending-before-read + 2']);
      for (let minute = 2; minute <= 4; minute++) {
        await writer.ingest.applyMetrics(batch([point('a', Temporality.Delta, minute - 1, minute, 5)]));
        expected += 5;
        // Pending on the writer's side. A reader whose last read found none looks, finds it, folds it and sends the
        // statements again: the look, then the schedule's fold, then the four statements in one batch with nothing
        // ahead.
        const pending = await sent(matrix);
        expect(pending[0]).toEqual(looking[0]);
        expect(pending.at(-1)).toBe('alone + 4');
        expect(pending.slice(1, -1).every((what) => what === 'other')).toBe(true);
        // Folded: the next read still carries the fold (exports may be coming), finds nothing, and the one after looks.
        expect(await sent(matrix)).toEqual(folding);
        expect(await sent(matrix)).toEqual(looking);
      }
      expect(reader.reader.behind()).toBe(false);
    } finally {
      await Promise.all([writer.lifecycle.close(), reader.lifecycle.close()]);
    }
  });

  it("a long range's open hour is read by the cells joined to their hours (which the planner may run from the hour out): every service's cells and one service's, exact, a point into the open hour seen by the next read", async () => {
    const url = await databases.create();
    const store = await open(url);
    const week = { fromMs: T0 - 7 * 24 * 60 * MS_PER_MINUTE, toMs: T0 + 30 * MS_PER_MINUTE };
    const statements = async (read: () => Promise<unknown>): Promise<string[]> => {
      const spy = vi.spyOn(pg.Client.prototype, 'query');
      try {
        await read();
        return spy.mock.calls.flatMap(([query]) => ((query as { statements?: { text: string }[] }).statements ?? []).map((statement) => statement.text));
      } finally {
        spy.mockRestore();
      }
    };
    const requests = async (service?: string): Promise<Record<string, number>> =>
      Object.fromEntries((await store.reader.cellTotals({ ...week, service })).cells.map((cell) => [cell.clientName ?? 'null', cell.count]).sort());
    try {
      // Closed hours (a day before) and the open hour, two clients.
      await store.ingest.applyMetrics(batch([point('a', Temporality.Delta, -1441, -1440, 3), point('b', Temporality.Delta, -1441, -1440, 4)]));
      await store.ingest.applyMetrics(batch([point('a', Temporality.Delta, 9, 10, 5)]));
      expect(await requests()).toEqual({ a: 8, b: 4 });
      // Read again: the closed part kept, the open hour read by the join.
      const sent = await statements(async () => expect(await requests()).toEqual({ a: 8, b: 4 }));
      expect(sent.filter((text) => text.includes('JOIN cell_hour b ON b.cell_id = c.id AND b.hour >= $'))).toHaveLength(1);
      expect(await requests('svc')).toEqual({ a: 8, b: 4 });
      expect(await requests('other')).toEqual({});
      await store.ingest.applyMetrics(batch([point('b', Temporality.Delta, 19, 20, 6)]));
      expect(await requests()).toEqual({ a: 8, b: 10 });
      expect(await requests('svc')).toEqual({ a: 8, b: 10 });
    } finally {
      await store.lifecycle.close();
    }
  });

  it('the distinct-extension-id limit admits at most its number of ids per instance and hour over all collectors, and each collector counts what it sent past it', async () => {
    const url = await databases.create();
    const stores = await Promise.all([open(url), open(url), open(url)]);
    const max = 5;
    const processors = stores.map(
      (store) =>
        new ExtensionIdLimit(
          { maxIdsPerInstanceHour: max },
          {
            consumeMetrics: async (data): Promise<MetricsOutcome> => ({
              ...(await store.ingest.applyMetrics(data)),
              rejections: [],
              ignored: new Map(),
              rejectedReason: undefined,
            }),
          },
          store.idLimits,
        ),
    );
    const extensionPoint = (id: string): CounterPoint => {
      const base = point('client', Temporality.Delta, 0, 1, 1);
      const dims = { ...base.dims, kind: SeriesKind.Extension, extensionId: id, clientDeclared: true, serverDeclared: true, negotiated: true, required: false };
      return { ...base, dims, streamAttributes: JSON.stringify(dims) };
    };
    // 12 ids, 4 through each collector at once: every collector sees room for all of its own.
    await Promise.all(processors.map((processor, index) => processor.consumeMetrics(batch([0, 1, 2, 3].map((n) => extensionPoint(`ext-${index}-${n}`))))));
    const { cells } = await stores[0]!.reader.cellTotals({ fromMs: T0 - MS_PER_MINUTE * 60, toMs: T0 + MS_PER_MINUTE * 60 });
    const byId = new Map<string, number>();
    for (const cell of cells)
      if (cell.kind === SeriesKind.Extension) byId.set(cell.extensionId ?? 'null', (byId.get(cell.extensionId ?? 'null') ?? 0) + cell.count);
    const admitted = [...byId.keys()].filter((id) => id !== '_OTHER');
    expect(admitted).toHaveLength(max);
    expect(byId.get('_OTHER')).toBe(12 - max);
    expect(processors.reduce((sum, processor) => sum + processor.overflowed, 0)).toBe(12 - max);
    const hour = Math.floor((T0 + MS_PER_MINUTE) / (60 * MS_PER_MINUTE));
    const [stored] = await stores[1]!.idLimits.admittedIds([{ instance: JSON.stringify(['svc', 'i-1']), hour }]);
    expect([...(stored?.ids ?? [])].sort()).toEqual([...admitted].sort());
    await Promise.all(stores.map((store) => store.lifecycle.close()));
  });

  it('a background job runs on one collector at a time, and passes to another when that one closes', async () => {
    const url = await databases.create();
    const [first, second] = await Promise.all([open(url), open(url)]);
    if (first === undefined || second === undefined) throw new Error('two stores expected');
    const ran: string[] = [];
    const job = (name: string) => async () => void ran.push(name);
    expect(await first.lifecycle.leadership().runExclusive('retention', job('first'))).toBe(true);
    expect(await second.lifecycle.leadership().runExclusive('retention', job('second'))).toBe(false);
    expect(await first.lifecycle.leadership().runExclusive('retention', job('first'))).toBe(true);
    // Another job is free for the other collector.
    expect(await second.lifecycle.leadership().runExclusive('alerts', job('second-alerts'))).toBe(true);
    await first.lifecycle.close();
    expect(await second.lifecycle.leadership().runExclusive('retention', job('second'))).toBe(true);
    expect(ran).toEqual(['first', 'first', 'second-alerts', 'second']);
    await second.lifecycle.close();
  });

  it('a transaction failing with a serialization failure or deadlock is run again; past the bound it is a 503 to retry later', async () => {
    const url = await databases.create();
    const pool = createPool(url, 2, () => undefined);
    try {
      let attempts = 0;
      const result = await inTransaction(pool, async (db) => {
        attempts++;
        if (attempts < 3) await db.query(`DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '${attempts === 1 ? '40001' : '40P01'}'; END $$`);
        return (await db.query<{ one: number }>('SELECT 1 AS one')).rows[0]?.one;
      });
      expect([result, attempts]).toEqual([1, 3]);
      let always = 0;
      const failure = await inTransaction(pool, async (db) => {
        always++;
        await db.query(`DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40P01'; END $$`);
      }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StoreUnavailableError);
      expect(httpStatusOf(failure).status).toBe(503);
      expect(always).toBe(6);
      // An error of the data (division by zero) is not retried, nor made retryable.
      let once = 0;
      const dataError = await inTransaction(pool, async (db) => {
        once++;
        await db.query('SELECT 1 / 0');
      }).catch((error: unknown) => error);
      expect([once, (dataError as { code?: string }).code, dataError instanceof StoreUnavailableError]).toEqual([1, '22012', false]);
    } finally {
      await pool.end();
    }
  });

  it('a transaction whose BEGIN and COMMIT go with its first and last statements is one round trip each, atomic, and rolled back when a statement or the commit fails', async () => {
    const url = await databases.create();
    const pool = createPool(url, 1, () => undefined);
    let sent = 0;
    const count = (client: pg.PoolClient): void => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
        sent++;
        return query(...args);
      };
    };
    try {
      await pool.query('CREATE TABLE t (v integer PRIMARY KEY CHECK (v < 100)); CREATE TABLE d (v integer REFERENCES t DEFERRABLE INITIALLY DEFERRED)');
      const insert = (v: number) => ({ name: 'insert-t', text: 'INSERT INTO t (v) VALUES ($1) RETURNING v * 2 AS twice', values: [v] });
      const rows = await inBatchedTransaction(pool, async (transaction) => {
        count(transaction.client);
        const first = await transaction.first<{ twice: number }>(insert(1));
        // A statement between the two sees the transaction's own rows.
        const between = await transaction.client.query<{ n: number }>('SELECT count(*)::integer AS n FROM t');
        const last = await transaction.last<{ twice: number }>(insert(2));
        return [first[0]?.twice, between.rows[0]?.n, last[0]?.twice];
      });
      expect([rows, sent]).toEqual([[2, 1, 4], 3]);
      // The last statement fails: the first one's row is rolled back with it, and the connection serves the next.
      const failed = (await inBatchedTransaction(pool, async (transaction) => {
        await transaction.first(insert(3));
        await transaction.last(insert(100));
      }).catch((error: unknown) => error)) as { code?: string };
      expect(failed.code).toBe('23514');
      // The commit itself fails (a deferred constraint): nothing stays.
      const atCommit = (await inBatchedTransaction(pool, async (transaction) => {
        await transaction.first(insert(4));
        await transaction.last({ text: 'INSERT INTO d (v) VALUES ($1) RETURNING v', values: [999] });
      }).catch((error: unknown) => error)) as { code?: string };
      expect(atCommit.code).toBe('23503');
      // A transaction that ends without its last statement commits on its own.
      await inBatchedTransaction(pool, (transaction) => transaction.first(insert(5)));
      const { rows: stored } = await pool.query<{ v: number }>('SELECT v FROM t ORDER BY v');
      const { rows: open } = await pool.query<{ n: number }>(
        "SELECT count(*)::integer AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
      );
      expect([stored.map((row) => row.v), open[0]?.n]).toEqual([[1, 2, 5], 0]);
    } finally {
      await pool.end();
    }
  });

  it('statements asked for in one turn go in one round trip on one connection, behind one look for pending increments; one that fails fails alone: those before it answer, those after it are sent again', async () => {
    const url = await databases.create();
    await (await open(url)).lifecycle.close();
    const pool = createPool(url, 4, () => undefined);
    const schedule = new FoldSchedule(new PostgresFolder(pool), () => undefined, undefined);
    const reads = new FoldedReads(pool, schedule);
    const spy = vi.spyOn(pg.Client.prototype, 'query');
    const value = (v: number): Statement => ({ name: 'a-value', text: 'SELECT $1::integer AS v', values: [v] });
    const answered = (answer: PromiseSettledResult<{ rows: unknown[] }>): unknown =>
      answer.status === 'fulfilled' ? answer.value.rows : (answer.reason as { code?: string }).code;
    try {
      expect(await Promise.all([reads.query(value(1)), reads.query(value(2)), reads.query(value(3))])).toEqual([
        { rows: [{ v: 1 }] },
        { rows: [{ v: 2 }] },
        { rows: [{ v: 3 }] },
      ]);
      // One connection's one query: the three statements with the fold ahead (nothing was pending yet).
      expect(
        spy.mock.calls.map(([query]) => [(query as { ahead?: { name: string } }).ahead?.name, (query as { statements?: unknown[] }).statements?.length]),
      ).toEqual([['extscope-fold-before-read', 3]]);
      spy.mockClear();
      // The second of four fails (division by zero): the first answers, the last two are sent again, without a look ahead.
      const failing: Statement = { text: 'SELECT 1 / $1::integer AS v', values: [0] };
      const settled = await Promise.allSettled([reads.query(value(4)), reads.query(failing), reads.query(value(5)), reads.query(value(6))]);
      expect(settled.map(answered)).toEqual([[{ v: 4 }], '22012', [{ v: 5 }], [{ v: 6 }]]);
      expect(
        spy.mock.calls.map(([query]) => [(query as { ahead?: { name: string } }).ahead?.name, (query as { statements?: unknown[] }).statements?.length]),
      ).toEqual([
        ['extscope-pending-before-read', 4],
        [undefined, 2],
      ]);
      expect(schedule.failed).toBe(false);
    } finally {
      spy.mockRestore();
      await pool.end();
    }
  });

  it("the store's pooled connections run with JIT compilation off, the timeouts set", async () => {
    const pool = createPool(await databases.create(), 1, () => undefined, { statementTimeoutMs: 1234, lockTimeoutMs: 567 });
    try {
      const { rows } = await pool.query<{ jit: string; statement: string; lock: string }>(
        "SELECT current_setting('jit') AS jit, current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock",
      );
      expect(rows[0]).toEqual({ jit: 'off', statement: '1234ms', lock: '567ms' });
    } finally {
      await pool.end();
    }
  });

  it('the password is not in an error about the database, nor in a logged URL', async () => {
    const secret = 'hunter2-secret';
    const url = `postgres://extscope:${secret}@127.0.0.1:1/nowhere?connect_timeout=2`;
    expect(redactUrl(url)).not.toContain(secret);
    expect(redactUrl('postgresql://u@h/db?password=p4ss')).not.toContain('p4ss');
    const failure = await open(url).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(failure?.message).toContain('127.0.0.1:1');
    expect(failure?.message).not.toContain(secret);
  });
});

describe('PostgreSQL group commit: exports arriving while a transaction is in flight share the next one', () => {
  const databases = testDatabases('groups');
  afterAll(() => databases.dropAll());

  /** How many export transactions (each begins with one load statement) `work` runs or tries to, on any connection. */
  const exportTransactions = async <T>(work: () => Promise<T>): Promise<{ result: T; transactions: number }> => {
    const spy = vi.spyOn(pg.Client.prototype, 'query');
    try {
      const result = await work();
      return { result, transactions: spy.mock.calls.filter(([query]) => (query as { name?: string }).name === 'extscope-load-export').length };
    } finally {
      spy.mockRestore();
    }
  };
  const settle = <T>(promises: Promise<T>[]): Promise<PromiseSettledResult<T>[]> => Promise.allSettled(promises);
  const outcome = (settled: PromiseSettledResult<{ applied: number; duplicates: number }>) =>
    settled.status === 'fulfilled' ? [settled.value.applied, settled.value.duplicates] : settled.reason instanceof StoreUnavailableError ? '503' : 'failed';

  it('ten exports sent at once share one transaction (run twice: an instance was new), each answered with its own counts: a retry beside its original and a cumulative total carried from the export before it count once', async () => {
    const store = await open(await databases.create());
    try {
      // The instance and the cumulative stream's first total (10) are stored first.
      await store.ingest.applyMetrics(batch([point('a', Temporality.Delta, 0, 1, 1), point('cum', Temporality.Cumulative, 0, 1, 10)]));
      const exports = [
        batch([point('a', Temporality.Delta, 1, 2, 1)]),
        batch([point('a', Temporality.Delta, 2, 3, 1)]),
        batch([point('b', Temporality.Delta, 0, 1, 2), point('c', Temporality.Delta, 0, 1, 3)]),
        batch([point('b', Temporality.Delta, 0, 1, 2), point('c', Temporality.Delta, 0, 1, 3)]),
        batch([point('cum', Temporality.Cumulative, 0, 2, 15)]),
        batch([point('cum', Temporality.Cumulative, 0, 3, 22)]),
        batch([point('cum', Temporality.Cumulative, 0, 3, 22)]),
        batch([point('d', Temporality.Delta, 0, 1, 4)]),
        batch([point('d', Temporality.Delta, 1, 2, 4), point('a', Temporality.Delta, 2, 3, 1)]),
        batch([point('e', Temporality.Delta, 0, 1, 5)], 'i-2'),
      ];
      const { result, transactions } = await exportTransactions(() => settle(exports.map((exported) => store.ingest.applyMetrics(exported))));
      // The transaction finds i-2 not stored, creates it (in a transaction of its own) and runs again.
      expect(transactions).toBe(2);
      expect(result.map(outcome)).toEqual([
        [1, 0],
        [1, 0],
        [2, 0],
        [0, 2],
        [1, 0],
        [1, 0],
        [0, 1],
        [1, 0],
        [1, 1],
        [1, 0],
      ]);
      expect(await totals(store)).toEqual({ a: 3, b: 2, c: 3, cum: 22, d: 8, e: 5 });
    } finally {
      await store.lifecycle.close();
    }
  });

  it('an export that fails for a reason of its own fails alone: the others of its transaction are written', async () => {
    const store = await open(await databases.create());
    try {
      await store.ingest.applyMetrics(batch([point('a', Temporality.Delta, 0, 1, 1)]));
      const exports = [
        batch([point('a', Temporality.Delta, 1, 2, 1)]),
        batch([point('a', Temporality.Delta, 2, 3, 1)]),
        batch([point('b', Temporality.Delta, 0, 1, 2)]),
        // PostgreSQL refuses a NUL character in text: this export's new stream cannot be stored.
        batch([point('bad\u0000name', Temporality.Delta, 0, 1, 7)]),
        batch([point('c', Temporality.Delta, 0, 1, 3)]),
      ];
      const settled = await settle(exports.map((exported) => store.ingest.applyMetrics(exported)));
      expect(settled.map(outcome)).toEqual([[1, 0], [1, 0], [1, 0], 'failed', [1, 0]]);
      expect(await totals(store)).toEqual({ a: 3, b: 2, c: 3 });
    } finally {
      await store.lifecycle.close();
    }
  });

  it("a transaction the database fails fails every export in it, and the senders' retries count each point once", async () => {
    const url = await databases.create();
    const store = await openPostgresStore({
      url,
      clock: () => T0 + 30 * MS_PER_MINUTE,
      retention: RETENTION,
      examplesPerCell: 2,
      timeouts: { statementTimeoutMs: 10_000, lockTimeoutMs: 200 },
    });
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await store.ingest.applyMetrics(batch([point('a', Temporality.Delta, 0, 1, 1)]));
      const exports = [1, 2, 3, 4, 5].map((minute) =>
        batch([point('a', Temporality.Delta, minute, minute + 1, 1), point('b', Temporality.Delta, minute, minute + 1, 2)]),
      );
      // Where every export appends its increments, locked by someone else for longer than the store waits.
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE pending_increments IN ACCESS EXCLUSIVE MODE');
      const failed = await exportTransactions(() => settle(exports.map((exported) => store.ingest.applyMetrics(exported))));
      expect(failed.result.map(outcome)).toEqual(['503', '503', '503', '503', '503']);
      expect(failed.transactions).toBe(1);
      await locker.query('COMMIT');
      // Retried (twice, as a sender that did not see the first answer might): each point once.
      const retried = await settle([...exports, ...exports].map((exported) => store.ingest.applyMetrics(exported)));
      expect(retried.map(outcome)).toEqual([...exports.map(() => [2, 0]), ...exports.map(() => [0, 2])]);
      expect(await totals(store)).toEqual({ a: 6, b: 10 });
    } finally {
      await locker.end();
      await store.lifecycle.close();
    }
  });
});
