import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { type CollectorOptions, type RunningCollector, startCollector } from '../../../collector/index.js';

/** A temp directory per test, removed afterwards. */
export async function tempDir(): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'extscope-collector-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export interface TestCollector extends RunningCollector {
  dbPath: string;
}

/** A real collector on 127.0.0.1:0 with its own SQLite file. */
export async function startTestCollector(dir: string, options: Partial<CollectorOptions> = {}): Promise<TestCollector> {
  const dbPath = options.dbPath ?? join(dir, 'extscope.db');
  const collector = await startCollector({ host: '127.0.0.1', port: 0, ...options, dbPath });
  return { ...collector, dbPath };
}

export async function getJson<T = Record<string, unknown>>(url: string, token?: string): Promise<{ status: number; body: T }> {
  const response = await fetch(url, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, body: (await response.json()) as T };
}

export interface MatrixRowJson {
  client: string;
  name: string | null;
  version: string | null;
  requests: number;
  /** Of `requests`, those answered before any server instance existed. */
  serverUnknown: number;
  declaration: { unknown: number; none: number; declared: number };
  extensions: { id: string; clientDeclared: number; serverAdvertised: number; negotiated: number; serverUnknown: number }[];
}

export interface MatrixJson {
  from: string;
  to: string;
  resolution: string;
  extensions: string[];
  rows: MatrixRowJson[];
}

/** The matrix as the API answers it, every derived field included. */
export async function matrixAnswer<T = MatrixJson>(url: string, query = '', token?: string): Promise<T> {
  const { status, body } = await getJson<T>(`${url}/api/v1/matrix?from=-7d${query}`, token);
  if (status !== 200) throw new Error(`matrix: HTTP ${status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * The matrix's counts: each cell reduced to what was counted (its state, shares and -32021 answers, which the API
 * derives from these, are asserted in test/collector/http/api-v1.test.ts), so that count tests compare counts.
 */
export async function matrix(url: string, query = '', token?: string): Promise<MatrixJson> {
  const body = await matrixAnswer(url, query, token);
  const counts = ({
    id,
    clientDeclared,
    serverAdvertised,
    negotiated,
    serverUnknown,
  }: MatrixRowJson['extensions'][number]): MatrixRowJson['extensions'][number] => ({ id, clientDeclared, serverAdvertised, negotiated, serverUnknown });
  return { ...body, rows: body.rows.map((row) => ({ ...row, extensions: row.extensions.map(counts) })) };
}

/** Every minute rollup with its series' attributes (ids left out), for comparing two databases. */
export function dumpRollups(dbPath: string): string[] {
  const db = new Database(dbPath, { readonly: true });
  try {
    const rows = db
      .prepare(
        `
        SELECT i.service, i.instance_id, s.kind, s.server_name, s.server_version, s.method, s.era, s.protocol_version,
               s.client_name, s.client_version, s.client_declaration, s.server_declaration, s.outcome, s.status_code,
               s.extension_id, s.client_declared, s.server_declared, s.negotiated, s.required, m.minute, m.count
        FROM series_minute m JOIN series s ON s.id = m.series_id JOIN instances i ON i.id = s.instance_ref`,
      )
      .all();
    return rows.map((row) => JSON.stringify(row)).sort();
  } finally {
    db.close();
  }
}

export function tableCount(dbPath: string, table: string): number {
  const db = new Database(dbPath, { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

const CLI = fileURLToPath(new URL('../../../dist/bin/extscope.js', import.meta.url));

export interface ChildCollector {
  url: string;
  child: ChildProcess;
  output: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs the built CLI as a child process and waits (20 s unless `startWithinMs` says otherwise) for its "listening" line. */
export async function spawnCollector(
  dbPath: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
  { startWithinMs = 20_000 } = {},
): Promise<ChildCollector> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run "npm run build" before the collector tests`);
  // A collector given a fixed --port would otherwise take the default gRPC port, 4317, which another test (or anything
  // else on the machine) may hold: ephemeral unless the test chose the gRPC port itself.
  const grpcChosen = args.includes('--grpc-port') || env['EXTSCOPE_GRPC_PORT'] !== undefined;
  const child = spawn(process.execPath, [CLI, 'collector', '--port', '0', ...(grpcChosen ? [] : ['--grpc-port', '0']), '--db', dbPath, ...args], {
    env: { ...process.env, EXTSCOPE_INGEST_TOKEN: '', EXTSCOPE_READ_TOKEN: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`collector did not start:\n${output.join('')}`)), startWithinMs);
    const onData = (chunk: Buffer): void => {
      const text = chunk.toString();
      output.push(text);
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output.join(''));
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`collector exited (${code}) before listening:\n${output.join('')}`));
    });
  });
  return { url, child, output, exited };
}

/** Runs the CLI to completion (for commands expected to fail fast). */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, EXTSCOPE_INGEST_TOKEN: '', EXTSCOPE_READ_TOKEN: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}
