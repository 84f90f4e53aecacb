import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { type BinaryElementType, BINARY_ELEMENT_TYPES, binaryArray } from './binary-arrays.js';
import { StoreUnavailableError } from '../store.js';

/** int8 columns (ids, counts, milliseconds) as numbers: every such value the store keeps is below 2^53. Nanosecond columns are read as text. */
const INT8_OID = 20;
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format as 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/** True for a `postgres://` or `postgresql://` URL (anything else given as `--db` is an SQLite file). */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db.trim());
}

/** The URL without its password (also a `password=` parameter), for logs and error messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
    return parsed.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@').replace(/password=[^&\s]*/gi, 'password=***');
  }
}

/** How long one statement of the store may run, and wait for a lock, before PostgreSQL cancels it. */
export interface StatementTimeouts {
  /** `statement_timeout` of every pooled connection. */
  statementTimeoutMs: number;
  /** `lock_timeout` of every pooled connection: a lock held elsewhere (an operator's `LOCK TABLE`, another replica's fold) is waited for this long. */
  lockTimeoutMs: number;
}

export const DEFAULT_STATEMENT_TIMEOUTS: StatementTimeouts = { statementTimeoutMs: 30_000, lockTimeoutMs: 3000 };

/**
 * Settings not in the URL come from the standard `PG*` variables and TLS from `sslmode` / `sslrootcert`
 * in the URL, both read by node-postgres itself. Keep-alive lets the database notice a replica that vanished
 * (its advisory locks, and with them its background jobs, pass to another one). Every statement on the pool runs
 * under `statement_timeout` and `lock_timeout` (set at connection start): without them a lock held elsewhere held
 * every export (a 20 s `LOCK TABLE pending_increments` held each for 20 s); with them it is a 503 the sender
 * retries (SQLSTATE 55P03 and 57014 are classes the store reports as unavailable). JIT compilation is off: the
 * reads sum each cell's rollup rows in a subquery per cell, whose estimated cost over thousands of cells passes
 * `jit_above_cost`, and compiling them took longer than running them (the 7-day rows by service: 575 ms of JIT in
 * a 950 ms statement that takes 360 ms without). An `options` parameter in the URL replaces this one.
 */
export function createPool(url: string, max: number, onError: (message: string) => void, timeouts: StatementTimeouts = DEFAULT_STATEMENT_TIMEOUTS): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    types: TYPES,
    keepAlive: true,
    connectionTimeoutMillis: 10_000,
    application_name: 'extscope',
    statement_timeout: timeouts.statementTimeoutMs,
    lock_timeout: timeouts.lockTimeoutMs,
    options: '-c jit=off',
  });
  // An idle connection that breaks (the server restarted) must not crash the process; the pool replaces it.
  pool.on('error', (error) => onError(`postgres: an idle connection failed: ${describeError(error)}`));
  // So must one that breaks while checked out between two queries (the pool listens only while a connection is
  // idle): its next query fails, and the caller releases it as broken.
  pool.on('connect', (client) => {
    client.on('error', (error) => onError(`postgres: a connection in use failed: ${describeError(error)}`));
  });
  return pool;
}

/** A dedicated connection (not from the pool): held by the leadership locks and the migration lock. */
export function createClient(url: string): pg.Client {
  return new pg.Client({ connectionString: url, types: TYPES, keepAlive: true, connectionTimeoutMillis: 10_000, application_name: 'extscope' });
}

/** SQLSTATE classes that say nothing about the data: connection, resources, operator intervention, read-only standby. */
const UNAVAILABLE_CLASSES = new Set(['08', '53', '57', '58', '40', '55', '25']);
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** Serialization failure and deadlock: the transaction is retried as a whole. */
const RETRY_CODES = new Set(['40001', '40P01']);

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // node-postgres does not put the password in messages; a URL might still appear in one (DNS errors).
  return message.replace(/postgres(ql)?:\/\/\S+/gi, (url) => redactUrl(url));
}

/** Whether the database (not the data) is why `error` happened: the sender should retry later. */
function isUnavailable(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  const code = sqlState(error);
  if (error instanceof pg.DatabaseError) return code !== undefined && UNAVAILABLE_CLASSES.has(code.slice(0, 2));
  if (code !== undefined && UNAVAILABLE_CODES.has(code)) return true;
  return (
    error instanceof Error &&
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed/i.test(error.message)
  );
}

/** A failure as the store reports it: retryable when the database is the reason, otherwise unchanged (a bug). */
export function asStoreError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  if (isUnavailable(error)) return new StoreUnavailableError(`database: ${describeError(error)}`);
  return error;
}

/** Runs a read; its failure as the store reports it ({@link asStoreError}). */
export async function storeRead<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asStoreError(error);
  }
}

export type Queryable = Pick<pg.ClientBase, 'query'>;

/** What runs a {@link NamedStatement}: a connection, the pool, or the reads that fold first (folded-reads.ts). */
export interface StatementRunner {
  query(statement: Statement): Promise<{ rows: unknown[] }>;
}

/**
 * Runs `work` in one transaction (READ COMMITTED) on one pooled connection and commits. A serialization
 * failure or a deadlock (two exports locking the same streams) rolls back and runs it again, a bounded number
 * of times; then, as every failure of the database, it is a {@link StoreUnavailableError} (503, retry later).
 */
export function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>, attempts = 6): Promise<T> {
  return attempted(
    pool,
    async (client) => {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    },
    attempts,
  );
}

/**
 * As {@link inTransaction}, for work whose first statement carries the BEGIN and whose last one the COMMIT
 * ({@link BatchedTransaction}): two round trips fewer.
 */
export function inBatchedTransaction<T>(pool: pg.Pool, work: (transaction: BatchedTransaction) => Promise<T>, attempts = 6): Promise<T> {
  return attempted(
    pool,
    async (client) => {
      const transaction = new BatchedTransaction(client);
      const result = await work(transaction);
      await transaction.end();
      return result;
    },
    attempts,
  );
}

/** Runs `transaction` (which begins and commits) on a pooled connection: rolled back on failure, retried as {@link inTransaction} says. */
async function attempted<T>(pool: pg.Pool, transaction: (client: pg.PoolClient) => Promise<T>, attempts: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw asStoreError(error);
    }
    try {
      const result = await transaction(client);
      client.release();
      return result;
    } catch (error) {
      const broken = await client.query('ROLLBACK').then(
        () => false,
        () => true,
      );
      // A connection that cannot even roll back is discarded, not returned to the pool.
      client.release(broken ? (error as Error) : undefined);
      const code = sqlState(error);
      if (code !== undefined && RETRY_CODES.has(code) && attempt < attempts) {
        await sleep(5 * attempt + Math.random() * 20 * attempt);
        continue;
      }
      if (code !== undefined && RETRY_CODES.has(code)) throw new StoreUnavailableError(`database: ${describeError(error)} (after ${attempts} attempts)`);
      throw asStoreError(error);
    }
  }
}

/**
 * Turns `@name` placeholders into `$n` (named parameters keep long statements readable); the same name is the same
 * `$n`. A placeholder cast to an array of a type {@link binaryArray} writes (`@name::bigint[]`) is sent in binary.
 */
function named(sql: string): { text: string; order: string[]; arrays: (BinaryElementType | undefined)[] } {
  const order: string[] = [];
  const arrays: (BinaryElementType | undefined)[] = [];
  const text = sql.replace(/@(\w+)(::(\w+)\[\])?/g, (_match, name: string, cast: string | undefined, type: string | undefined) => {
    let index = order.indexOf(name);
    if (index < 0) index = order.push(name) - 1;
    if (type !== undefined && Object.hasOwn(BINARY_ELEMENT_TYPES, type)) {
      if (arrays[index] !== undefined && arrays[index] !== type) throw new Error(`@${name} is cast to ${arrays[index]}[] and to ${type}[]`);
      arrays[index] = type as BinaryElementType;
    }
    return `$${index + 1}${cast ?? ''}`;
  });
  return { text, order, arrays };
}

/**
 * A statement written with `@name` placeholders, run with an object of values. With a `prepared` name it is parsed
 * and planned once per connection (for statements every export runs).
 */
export class NamedStatement {
  private readonly text: string;
  private readonly order: string[];
  private readonly arrays: (BinaryElementType | undefined)[];

  constructor(
    sql: string,
    private readonly prepared?: string,
  ) {
    ({ text: this.text, order: this.order, arrays: this.arrays } = named(sql));
  }

  async all<Row>(db: StatementRunner, values: Record<string, unknown>): Promise<Row[]> {
    const result = await db.query(this.statement(values));
    return result.rows as Row[];
  }

  /** The statement with these values, as node-postgres takes it. */
  statement(values: Record<string, unknown>): Statement {
    return {
      ...(this.prepared === undefined ? {} : { name: this.prepared }),
      text: this.text,
      values: this.order.map((name, index) => {
        const value = values[name] ?? null;
        const type = this.arrays[index];
        return type !== undefined && Array.isArray(value) ? binaryArray(type, value) : value;
      }),
    };
  }
}

/**
 * A read's statement, prepared under a name of its text: parsed and planned once per connection rather than at every
 * read. A small read's statements took longer to plan than to run (one instance's cells 1.06 ms planning, 0.20 ms
 * running); PostgreSQL plans the first few runs with their values and then keeps a generic plan only when it does not
 * cost more than those.
 */
export function preparedRead(sql: string): NamedStatement {
  return new NamedStatement(sql, `extscope-read-${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`);
}

/** A statement as node-postgres takes it: prepared under `name` when there is one. */
export interface Statement {
  name?: string;
  text: string;
  values: unknown[];
}

/** The part of node-postgres' connection a statement with its transaction's edges writes to (pg/lib/connection.js). */
interface WireConnection {
  parse(message: { text: string; name?: string }): void;
  bind(message: { statement?: string }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string; rows: number | undefined }): void;
  sync(): void;
  /** Named statements parsed on this connection, or sent to be (node-postgres' own bookkeeping). */
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
}

/** node-postgres' own extended-protocol query, with the two steps {@link EdgedQuery} extends (pg/lib/query.js). */
interface ExtendedQuery {
  portal: string;
  prepare(connection: WireConnection): void;
}

/**
 * What begins a batched transaction (the writer's): the `BEGIN`, and no sequential scans where an index serves. Each
 * of its statements finds rows by key; PostgreSQL plans a prepared statement once for any values after its first five
 * runs, with the table sizes known then, and keeps that plan until the tables are next analysed. Prepared while the
 * tables were nearly empty (a fresh database, the first minute of a fleet), a scan of the whole table was the cheaper
 * plan, and it stayed while the table grew: the load scanned every stream and series on each export (25–50 ms at
 * 12,550 streams, where the indexes take about 1 ms). Planning each run anew instead costs 0.3–0.5 ms a statement.
 */
const BEGIN_STATEMENTS = ['BEGIN', 'SET LOCAL enable_seqscan = off'];

/**
 * A statement sent with a `BEGIN` before it and/or a `COMMIT` after it in one batch of protocol messages ending in
 * one Sync: one round trip. The server runs them in order and, after an error, skips the rest up to the Sync (a
 * failed statement leaves the transaction open and aborted: the caller rolls back, as after any failure). The
 * results come back as one list, the statement's between the edges'.
 */
class EdgedQuery extends pg.Query {
  constructor(
    statement: Statement,
    private readonly edges: { begin: boolean; commit: boolean },
    callback: (error: Error | undefined, results: unknown) => void,
  ) {
    super({ ...statement, callback } as pg.QueryConfig);
  }

  prepare(connection: WireConnection): void {
    if (this.edges.begin) for (const text of BEGIN_STATEMENTS) simpleStatement(connection, text);
    (pg.Query.prototype as unknown as ExtendedQuery).prepare.call(this, connection);
  }

  /** Called by `prepare` once the statement is bound: its Execute, then the COMMIT's, then the one Sync. */
  _getRows(connection: WireConnection, rows: number | undefined): void {
    connection.execute({ portal: (this as unknown as ExtendedQuery).portal, rows });
    if (this.edges.commit) simpleStatement(connection, 'COMMIT');
    connection.sync();
  }
}

/** Parse, Bind and Execute of a statement without parameters or rows, in the unnamed statement and portal. */
function simpleStatement(connection: WireConnection, text: string): void {
  connection.parse({ text });
  connection.bind({});
  connection.execute({ portal: '', rows: undefined });
}

/**
 * A prepared statement without parameters that returns rows, sent ahead of another in the same batch: parsed once
 * per connection (recorded as node-postgres records the statements it sends), then Bind, Describe and Execute.
 */
function leadingStatement(connection: WireConnection, statement: { name: string; text: string }): void {
  if (connection.parsedStatements[statement.name] === undefined && connection.submittedNamedStatements[statement.name] === undefined) {
    connection.parse(statement);
    connection.submittedNamedStatements[statement.name] = statement.text;
  }
  connection.bind({ statement: statement.name });
  connection.describe({ type: 'P', name: '' });
  connection.execute({ portal: '', rows: undefined });
}

/** A prepared statement without parameters that returns rows (a read's fold, or its look for pending increments). */
export interface AheadStatement {
  name: string;
  text: string;
}

/**
 * Statements sent in one batch of protocol messages ending in one Sync: one round trip, however many. `ahead` (when
 * given) runs first in a transaction of its own, which commits before the statements run: its locks are not held
 * through them, and they see what it wrote. Each statement is its own prepared statement (parsed once per
 * connection), bound and run in order; the server stops at the first error and skips the rest up to the Sync.
 */
class PipelinedQuery extends pg.Query {
  /** Which statement {@link prepare} is writing: node-postgres' own steps read the statement from the query itself. */
  private writing = 0;

  constructor(
    readonly statements: readonly Statement[],
    readonly ahead: AheadStatement | undefined,
    callback: (error: Error | undefined, results: unknown) => void,
  ) {
    // Extended even without parameters: a simple query would not send what goes with it.
    super({ ...(statements[0] as Statement), callback, queryMode: 'extended' } as pg.QueryConfig);
  }

  prepare(connection: WireConnection): void {
    if (this.ahead !== undefined) {
      simpleStatement(connection, 'BEGIN');
      leadingStatement(connection, this.ahead);
      simpleStatement(connection, 'COMMIT');
    }
    for (this.writing = 0; this.writing < this.statements.length; this.writing++) {
      const { name, text, values } = this.statements[this.writing] as Statement;
      Object.assign(this, { name, text, values });
      (pg.Query.prototype as unknown as ExtendedQuery).prepare.call(this, connection);
    }
  }

  /** Called by `prepare` once a statement is bound: its Execute, and after the last one the one Sync. */
  _getRows(connection: WireConnection, rows: number | undefined): void {
    connection.execute({ portal: (this as unknown as ExtendedQuery).portal, rows });
    if (this.writing === this.statements.length - 1) connection.sync();
  }

  /** The results in, each one's rows (a statement's whose answer was cut short by an error is not among them). */
  completed(): pg.QueryResult[] {
    const results = (this as unknown as { _results: pg.QueryResult | pg.QueryResult[] })._results;
    return (Array.isArray(results) ? results : [results]).filter((result) => result.command !== null && result.command !== undefined);
  }
}

/** What {@link pipelined} answers: the rows `ahead` returned (none without it), and each statement's rows in order. */
export interface PipelinedResult {
  ahead: Record<string, unknown>[];
  rows: unknown[][];
}

/**
 * A failure of {@link pipelined}: whether `ahead` committed (or there was none), and the rows of the statements
 * answered before the one that failed. The statements after it were not run.
 */
export interface PipelineFailure extends Error {
  aheadCommitted: boolean;
  answered: unknown[][];
}

/**
 * Runs `ahead` in a transaction of its own and then `statements`, in one round trip ({@link PipelinedQuery}). On
 * failure the error says how far it went ({@link PipelineFailure}). The connection is left as the failure left it:
 * the caller discards it.
 */
export function pipelined(client: pg.ClientBase, ahead: AheadStatement | undefined, statements: readonly Statement[]): Promise<PipelinedResult> {
  const edges = ahead === undefined ? 0 : 3;
  return new Promise((resolve, reject) => {
    const query: PipelinedQuery = new PipelinedQuery(statements, ahead, (error) => {
      const completed = query.completed();
      if (error !== undefined && error !== null) {
        const aheadCommitted = ahead === undefined || completed[2]?.command === 'COMMIT';
        const answered = aheadCommitted ? completed.slice(edges).map((result) => result.rows as unknown[]) : [];
        return reject(Object.assign(error, { aheadCommitted, answered }));
      }
      resolve({
        ahead: ahead === undefined ? [] : ((completed[1] as pg.QueryResult).rows as Record<string, unknown>[]),
        rows: completed.slice(edges).map((result) => result.rows as unknown[]),
      });
    });
    client.query(query);
  });
}

/** Runs `statement` with its transaction's edges in one round trip ({@link EdgedQuery}); resolves to its rows. */
function edged<Row>(client: pg.ClientBase, statement: Statement, edges: { begin: boolean; commit: boolean }): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    client.query(
      new EdgedQuery(statement, edges, (error, results) => {
        if (error !== undefined && error !== null) return reject(error);
        const all = results as pg.QueryResult[];
        resolve((all[edges.begin ? BEGIN_STATEMENTS.length : 0] as pg.QueryResult).rows as Row[]);
      }),
    );
  });
}

/**
 * A transaction that sends its `BEGIN` with its first statement ({@link first}) and its `COMMIT` with its last
 * ({@link last}); statements in between go to {@link client} as usual. One that ends without {@link last} commits
 * on its own.
 */
export class BatchedTransaction {
  private begun = false;
  private committed = false;

  constructor(readonly client: pg.PoolClient) {}

  first<Row>(statement: Statement): Promise<Row[]> {
    if (this.begun) throw new Error('the transaction has begun already');
    this.begun = true;
    return edged<Row>(this.client, statement, { begin: true, commit: false });
  }

  last<Row>(statement: Statement): Promise<Row[]> {
    if (this.committed) throw new Error('the transaction has committed already');
    const begin = !this.begun;
    this.begun = true;
    this.committed = true;
    return edged<Row>(this.client, statement, { begin, commit: true });
  }

  async end(): Promise<void> {
    if (!this.begun || this.committed) return;
    this.committed = true;
    await this.client.query('COMMIT');
  }
}
