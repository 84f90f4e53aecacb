/**
 * A PostgreSQL server restarted under ingest: a private cluster (initdb into a temporary directory, run as the
 * `postgres` user on its own port) behind a collector, exports sent one after another as an agent sends them, each
 * retried on a refusal until it is answered 200 (a bounded number of tries). Every request sent is counted once,
 * those acknowledged before the restart (pending or folded) and those after it alike.
 */
import { execFile } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { MINUTE_NS, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';
import { freePort, requireBinary } from '../support/daemon.js';

const run = promisify(execFile);
const BIN = '/usr/lib/postgresql/15/bin';
const EXPORTS = 60;
const RESTART_AFTER = 25;

/** Runs a PostgreSQL tool as the `postgres` user (initdb and the server refuse root). */
const asPostgres = (tool: string, args: string[]): Promise<{ stdout: string; stderr: string }> =>
  run('runuser', ['-u', 'postgres', '--', join(BIN, tool), ...args], { timeout: 60_000 });

describe('a PostgreSQL restart under ingest', () => {
  let dir: string;
  let port: number;
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector | undefined;
  const pgctl = (...args: string[]): Promise<unknown> => asPostgres('pg_ctl', ['-D', join(dir, 'data'), '-w', '-t', '60', ...args]);

  beforeAll(async () => {
    requireBinary(join(BIN, 'initdb'), 'postgresql');
    requireBinary('/usr/sbin/runuser', 'util-linux');
    dir = await mkdtemp(join(tmpdir(), 'extscope-pg-restart-'));
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(group.trim()));
    port = await freePort();
    await asPostgres('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'root', '--no-sync']);
    await pgctl('-l', join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start');
    const admin = new pg.Client({ connectionString: `postgres://root@127.0.0.1:${port}/postgres` });
    await admin.connect();
    await admin.query('CREATE DATABASE restart');
    await admin.end();
    temp = await tempDir();
  }, 120_000);

  afterAll(async () => {
    await collector?.close();
    await pgctl('-m', 'immediate', 'stop').catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    await temp?.cleanup();
  });

  it('every request sent before, during and after the restart is counted once', { timeout: 180_000 }, async () => {
    collector = await startTestCollector(temp.dir, { dbPath: `postgres://root@127.0.0.1:${port}/restart` });
    const url = collector.url;
    const minute = Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000;
    let sent = 0;
    let refused = 0;
    let restarted: Promise<unknown> | undefined;
    for (let index = 0; index < EXPORTS; index++) {
      // One delta point per export, each its own interval: 1..EXPORTS requests of client "steady".
      const startNs = msToNs(minute) + BigInt(index) * 1_000_000n;
      const body = metricsRequest({
        requests: [requestPoint({ client: 'steady', count: index + 1, startNs, timeNs: startNs + MINUTE_NS / 2n })],
        extensions: [],
      });
      if (index === RESTART_AFTER) {
        // Down first (every connection ended), then up again while the exports keep coming and being retried.
        await pgctl('-m', 'fast', 'stop');
        restarted = pgctl('-l', join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start');
      }
      let answered = false;
      for (let attempt = 0; attempt < 200 && !answered; attempt++) {
        const status = await postMetrics(url, body).then(
          (response) => response.status,
          () => 0,
        );
        if (status === 200) answered = true;
        else {
          expect([0, 503]).toContain(status);
          refused++;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      }
      expect(answered, `export ${index} answered 200 within its tries`).toBe(true);
      sent += index + 1;
    }
    await restarted;
    const response = await fetch(`${url}/api/v1/matrix?from=-1d`);
    const view = (await response.json()) as { rows: { client: string; requests: number }[] };
    expect(view.rows.map((row) => [row.client, row.requests])).toEqual([['steady', sent]]);
    expect(sent).toBe((EXPORTS * (EXPORTS + 1)) / 2);
    // The restart was seen: the export after the stop was refused at least once while the server was down.
    expect(refused).toBeGreaterThan(0);
  });
});
