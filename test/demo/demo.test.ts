/**
 * `npm run demo` (scripts/demo.mjs): the collector, four instrumented MCP servers and the SDK clients come up, every
 * dashboard view has data, a drift alert fires, and SIGINT (Ctrl-C) stops all of it: the demo exits 0 and no process it started survives.
 * Killed outright (SIGKILL), the demo cannot stop anything: the processes it started stop by themselves.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ProcessEntry, alive, commandLine, descendants, processes } from '../support/proc-tree.js';
import { ROOT } from '../support/processes.js';

interface MatrixRow {
  client: string;
  requests: number;
  declaration: { unknown: number; none: number; declared: number };
  extensions: { id: string; clientDeclared: number; serverAdvertised: number; negotiated: number }[];
}
interface Instance {
  service: string;
  instanceId: string;
  differs: boolean;
  drift: { lacks: string[] } | null;
  advertises: { id: string }[];
}

let demo: ChildProcess | undefined;
/** The process groups the demo started, as soon as they are known: a failed test still ends them. */
const groups = new Set<number>();
afterAll(async () => {
  if (demo !== undefined && demo.exitCode === null) {
    demo.kill('SIGINT');
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, 30_000);
      demo!.once('exit', () => resolve(clearTimeout(timer)));
    });
  }
  for (const group of groups) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Gone already, as it should be.
    }
  }
});

async function json<T>(url: string): Promise<T | undefined> {
  const response = await fetch(url).catch(() => undefined);
  return response?.ok === true ? ((await response.json()) as T) : undefined;
}

/** Polls `probe` every 500 ms until it returns a value, at most `timeoutMs`. */
async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

describe('npm run demo', () => {
  it(
    'fills every view from a real fleet and fires the drift alert, then stops on SIGINT with exit 0 and no surviving process',
    { timeout: 180_000 },
    async () => {
      demo = spawn(process.execPath, ['scripts/demo.mjs', '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      demo.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      demo.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const exited = new Promise<number | null>((resolve) => demo!.once('exit', (code) => resolve(code)));

      const url = await until('the collector URL', 60_000, async () => /collector on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1]);
      const record = (): void => {
        for (const entry of descendants(demo!.pid!)) if (entry.pgid !== process.pid && entry.pgid !== demo!.pid) groups.add(entry.pgid);
      };
      record();
      const db = /database (\S+demo\.db)/.exec(stdout)?.[1];

      // The matrix: every kind of client the fleet runs, including the one without client info (its row is `unknown`).
      const rows = await until('the matrix rows of every client', 120_000, async () => {
        const matrix = await json<{ rows: MatrixRow[] }>(`${url}/api/v1/matrix?group=client_version`);
        const names = new Set(matrix?.rows.map((row) => row.client));
        const wanted = ['acme-desktop@1.4.0', 'orbit-cli@0.9.2', 'notes-app@3.0.0', 'ledger-bot@0.4.0'];
        return wanted.every((name) => names.has(name)) && [...names].some((name) => name.startsWith('(unknown client)')) ? matrix!.rows : undefined;
      });
      const row = (client: string): MatrixRow => rows.find((candidate) => candidate.client === client)!;
      const cell = (client: string, id: string) => row(client).extensions.find((extension) => extension.id === id);
      expect(cell('acme-desktop@1.4.0', 'io.modelcontextprotocol/tasks')?.negotiated).toBeGreaterThan(0);
      // acme-desktop declares search; only shop-a advertises it.
      expect(cell('orbit-cli@0.9.2', 'com.example/search')?.negotiated).toBeGreaterThan(0);
      expect(row('notes-app@3.0.0').declaration.none).toBeGreaterThan(0);

      // The fleet: four instances in two services, the two shop instances advertising different sets.
      const instances = await until('four instances', 60_000, async () => {
        const answer = await json<{ instances: Instance[] }>(`${url}/api/v1/instances`);
        return answer !== undefined && answer.instances.length >= 4 ? answer.instances : undefined;
      });
      expect(instances.map((instance) => instance.instanceId).sort()).toEqual(['docs-cjs', 'docs-legacy', 'shop-a', 'shop-b']);
      // shop-b lacks search: it is the one named; shop-a is not flagged.
      expect(instances.filter((instance) => instance.differs).map((instance) => [instance.instanceId, instance.drift?.lacks])).toEqual([
        ['shop-b', ['com.example/search']],
      ]);
      expect(instances.filter((instance) => instance.service === 'docs').some((instance) => instance.differs)).toBe(false);

      // Trends and the extension view: -32021 answers naming com.example/replay (ledger-bot), and both eras.
      const required = await until('a -32021 answer in the trends', 60_000, async () => {
        const answer = await json<{ total: number; extensions: { id: string; clients: { client: string }[] }[] }>(`${url}/api/v1/trends/required`);
        return answer !== undefined && answer.total > 0 ? answer : undefined;
      });
      expect(required.extensions.map((extension) => extension.id)).toEqual(['com.example/replay']);
      expect(required.extensions[0]!.clients.map((client) => client.client)).toEqual(['ledger-bot@0.4.0']);
      const declarations = await json<{ unknown: number[]; none: number[]; declared: number[] }>(`${url}/api/v1/trends/declarations`);
      const sum = (counts: number[]): number => counts.reduce((total, count) => total + count, 0);
      expect(sum(declarations!.declared)).toBeGreaterThan(0);
      expect(sum(declarations!.none)).toBeGreaterThan(0);
      // The 2025-era client over stateless HTTP: its calls reach instances that never saw its initialize.
      expect(sum(declarations!.unknown)).toBeGreaterThan(0);

      // Drift alerting: the two shop instances advertise different sets, so advertisement skew fires (demo/rules.yml: for 15 s).
      const skew = await until('advertisement skew firing', 90_000, async () => {
        const answer = await json<{ alerts: { rule: string; state: string; labels: Record<string, string>; annotations: Record<string, string> }[] }>(
          `${url}/api/v1/alerts?state=firing`,
        );
        return answer?.alerts.find((alert) => alert.rule === 'advertisement_skew');
      });
      expect(skew.labels['service']).toBe('shop');
      expect(skew.annotations['summary']).toBe('1 of 2 live instances of shop lacks com.example/search: shop-b');
      expect(skew.annotations['description']).not.toContain('shop-a');

      const before = descendants(demo.pid!);
      // The collector, four servers and the clients, each a process of its own (a group of its own, too).
      expect(before.filter((entry) => entry.ppid === demo!.pid).length).toBe(6);
      record();

      demo.kill('SIGINT');
      const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(resolve, 60_000, 'still running'))]);
      expect(code, stderr).toBe(0);
      expect(stdout).toContain('Demo stopped.');
      const survivors = before.filter(alive);
      const inGroups: ProcessEntry[] = processes().filter((entry) => groups.has(entry.pgid) && entry.state !== 'Z');
      expect(survivors.map((entry) => entry.pid)).toEqual([]);
      expect(inGroups.map((entry) => entry.pid)).toEqual([]);
      // The temporary database went with it.
      expect(db).toBeDefined();
      expect(existsSync(join(db!, '..'))).toBe(false);
    },
  );

  it('killed with SIGKILL, it leaves no process behind: everything it started stops by itself within 30 s', { timeout: 150_000 }, async () => {
    const killed = spawn(process.execPath, ['scripts/demo.mjs', '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    killed.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    killed.stderr!.resume();
    const exited = new Promise((resolve) => killed.once('exit', resolve));
    try {
      // The collector, the four servers and the clients are up, and the clients have started.
      await until('the collector URL', 60_000, async () => /collector on http:/.exec(stdout)?.[0]);
      await until("the demo's six processes", 90_000, async () =>
        descendants(killed.pid!).filter((entry) => entry.ppid === killed.pid).length === 6 ? true : undefined,
      );
      const started = descendants(killed.pid!);
      for (const entry of started) if (entry.pgid !== process.pid && entry.pgid !== killed.pid) groups.add(entry.pgid);
      expect(started.length).toBeGreaterThanOrEqual(6);

      killed.kill('SIGKILL');
      await exited;
      const left = await until('every process the demo started to stop', 30_000, async () => (started.some(alive) ? undefined : [])).catch(() =>
        started.filter(alive),
      );
      // Which one, by its command line: the pid alone says nothing once the run is over.
      expect(left.map((entry) => `${entry.pid} ${commandLine(entry.pid)}`)).toEqual([]);
    } finally {
      if (killed.exitCode === null && killed.signalCode === null) killed.kill('SIGKILL');
      // The demo could not remove its temporary database: this test does.
      const db = /database (\S+demo\.db)/.exec(stdout)?.[1];
      if (db !== undefined) await rm(join(db, '..'), { recursive: true, force: true });
    }
  });
});
