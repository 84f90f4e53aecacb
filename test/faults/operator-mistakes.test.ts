import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reachesCollector } from '../../collector/alerting/delivery/own-address.js';
import { runCli, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { testDatabases } from '../collector/store/postgres-server.js';
import { freePort } from '../support/counting-clients.js';

/**
 * Settings and commands an operator gets wrong: each must be one clear line and change nothing. Before,
 * `extscope db copy --from <mistyped path>` created an empty SQLite database there, migrated the target and
 * exited 0; and a webhook URL naming the collector itself was accepted (every notification POSTed to itself).
 */

const SECRET = 'webhook-secret-0123456789abcdef';

describe('operator mistakes are refused with one line, changing nothing', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  const databases = testDatabases('mistakes');
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });
  afterAll(async () => {
    await databases.dropAll();
  });

  it('db copy --from a path that is not an extscope database: one line, exit 1, no file created, nothing in the target', async () => {
    const target = await databases.create();
    const missing = join(temp.dir, 'extscpoe.db');
    const notDb = join(temp.dir, 'notes.txt');
    await writeFile(notDb, 'not a database\n');
    const results = [
      await runCli(['db', 'copy', '--from', missing, '--to', target]),
      await runCli(['db', 'copy', '--from', temp.dir, '--to', target]),
      await runCli(['db', 'copy', '--from', notDb, '--to', target]),
    ];
    expect(results.map(({ code, stdout, stderr }) => ({ code, stdout, stderr }))).toEqual([
      { code: 1, stdout: '', stderr: `extscope db copy: --from ${missing}: no such file\n` },
      { code: 1, stdout: '', stderr: `extscope db copy: --from ${temp.dir}: not a regular file\n` },
      { code: 1, stdout: '', stderr: `extscope db copy: --from ${notDb}: not an extscope database (file is not a database)\n` },
    ]);
    expect(existsSync(missing)).toBe(false);
    const client = new pg.Client({ connectionString: target });
    await client.connect();
    try {
      const { rows } = await client.query<{ count: string }>("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'");
      expect(Number(rows[0]?.count)).toBe(0);
    } finally {
      await client.end();
    }
  });

  it("a webhook or Alertmanager URL that is the collector's own address is refused at start, before the database is opened (loopback, listen, wildcard and interface addresses); another port is accepted", async () => {
    const port = await freePort();
    const own = [`http://127.0.0.1:${port}/hook`, `http://localhost:${port}/`, `http://[::1]:${port}/`];
    for (const url of own) {
      const result = await runCli(['collector', '--port', String(port), '--db', join(temp.dir, 'c.db')], {
        EXTSCOPE_WEBHOOK_URL: url,
        EXTSCOPE_WEBHOOK_SECRET: SECRET,
      });
      expect({ code: result.code, stderr: result.stderr }).toEqual({
        code: 2,
        stderr: `extscope collector: EXTSCOPE_WEBHOOK_URL ${JSON.stringify(url)} is this collector's own address (127.0.0.1:${port}): notifications would be sent to the collector itself; point it at the receiver\n`,
      });
    }
    const alertmanager = await runCli(['collector', '--port', String(port), '--db', join(temp.dir, 'c.db')], {
      EXTSCOPE_ALERTMANAGER_URL: `http://127.0.0.1:${port}`,
    });
    expect(alertmanager.code).toBe(2);
    expect(alertmanager.stderr).toContain('EXTSCOPE_ALERTMANAGER_URL "http://127.0.0.1:');
    // Nothing was opened: the database file was never created.
    expect(existsSync(join(temp.dir, 'c.db'))).toBe(false);
    // What counts as the collector's own address: its port, and its listen address, loopback, or any address of
    // the machine when it listens on all of them (the check the start makes, also once a port 0 is known).
    const lan = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address;
    const cases: [string, string, number, boolean][] = [
      [`http://127.0.0.2:${port}/`, '127.0.0.1', port, true],
      [`http://localhost:${port}/`, '0.0.0.0', port, true],
      [`http://[::1]:${port}/`, '::', port, true],
      [`http://127.0.0.1:${port + 1}/`, '127.0.0.1', port, false],
      [`http://192.0.2.7:${port}/`, '0.0.0.0', port, false],
      [`http://192.0.2.7:${port}/`, '127.0.0.1', port, false],
      [`http://10.1.2.3:${port}/`, '10.1.2.3', port, true],
      ['http://127.0.0.1/', '127.0.0.1', 80, true],
      ['https://127.0.0.1/', '127.0.0.1', 80, false],
      ...(lan === undefined
        ? []
        : ([
            [`http://${lan}:${port}/`, '0.0.0.0', port, true],
            [`http://${lan}:${port}/`, '127.0.0.1', port, false],
          ] as [string, string, number, boolean][])),
    ];
    expect(cases.map(([url, host, listening]) => reachesCollector(url, host, listening))).toEqual(cases.map(([, , , expected]) => expected));
    // Another port on this machine is another program: accepted.
    const other = await startTestCollector(temp.dir, { port: 0, delivery: { webhookUrl: `http://127.0.0.1:${port + 1}/hook`, webhookSecret: SECRET } });
    await other.close();
  });
});
