import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildKey } from '../../../collector/model/build.js';
import { findMigrationsDir, loadMigrations } from '../../../collector/store/common/migrations.js';
import { migrate } from '../../../collector/store/sqlite/migrate.js';
import { SchemaTooNewError } from '../../../collector/store/store.js';
import { runCli, startTestCollector, tempDir } from '../helpers/collector.js';

describe('migrations', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('are numbered SQL files applied in order at start and recorded', async () => {
    const shipped = loadMigrations(findMigrationsDir('sqlite'));
    expect(shipped.map((m) => m.version)).toEqual(shipped.map((_, index) => index + 1));
    const collector = await startTestCollector(temp.dir);
    await collector.close();
    const db = new Database(collector.dbPath, { readonly: true });
    try {
      const rows = db.prepare('SELECT version, name, checksum FROM schema_migrations ORDER BY version').all();
      expect(rows).toEqual(shipped.map((m) => ({ version: m.version, name: m.name, checksum: m.checksum })));
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      db.close();
    }
  });

  it('apply only what is new, each once, and refuse gaps', async () => {
    const dir = join(temp.dir, 'migrations');
    await mkdir(dir);
    await writeFile(join(dir, '001_first.sql'), 'CREATE TABLE a (x INTEGER);');
    const db = new Database(':memory:');
    try {
      expect(migrate(db, loadMigrations(dir))).toMatchObject({ version: 1, applied: [1] });
      await writeFile(join(dir, '002_second.sql'), 'CREATE TABLE b (y INTEGER); INSERT INTO a VALUES (1);');
      expect(migrate(db, loadMigrations(dir))).toMatchObject({ version: 2, applied: [2] });
      expect(migrate(db, loadMigrations(dir))).toMatchObject({ version: 2, applied: [] });
      expect(db.prepare('SELECT count(*) AS n FROM a').get()).toEqual({ n: 1 });
      await writeFile(join(dir, '001_first.sql'), 'CREATE TABLE a (x INTEGER); -- edited');
      expect(migrate(db, loadMigrations(dir)).changed).toEqual([1]);
      await writeFile(join(dir, '004_gap.sql'), 'SELECT 1;');
      expect(() => loadMigrations(dir)).toThrow(/without gaps/);
    } finally {
      db.close();
    }
  });

  it('the builds migration keys the instances already stored as buildKey() keys new ones, odd characters included', () => {
    const shipped = loadMigrations(findMigrationsDir('sqlite'));
    const builds = shipped.findIndex((m) => m.name === 'builds_and_sessions');
    expect(builds).toBeGreaterThan(0);
    const db = new Database(':memory:');
    try {
      migrate(db, shipped.slice(0, builds));
      const insert = db.prepare(
        'INSERT INTO instances (key_hash, service, instance_id, service_version, host, server_name, server_version, first_seen_ms, last_seen_ms) VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0)',
      );
      const identities = [
        { service: 'shop', serverName: 'shop', serverVersion: '1.0.0', host: 'h' },
        { service: 'q"u\\o/te \u00e9\u2028\ud83d\ude00', serverName: null, serverVersion: null, host: null },
      ];
      identities.forEach((identity, index) =>
        insert.run(Buffer.from([index]), identity.service, `i-${index}`, null, identity.host, identity.serverName, identity.serverVersion),
      );
      migrate(db, shipped);
      const keys = db.prepare('SELECT build_key FROM instances ORDER BY key_hash').pluck().all();
      expect(keys).toEqual(identities.map((identity) => buildKey({ ...identity, deploymentEnvironment: null, k8sNamespace: null, k8sDeployment: null })));
    } finally {
      db.close();
    }
  });

  it('a failing migration leaves the database at the previous version', async () => {
    const dir = join(temp.dir, 'broken');
    await mkdir(dir);
    await writeFile(join(dir, '001_first.sql'), 'CREATE TABLE a (x INTEGER);');
    await writeFile(join(dir, '002_broken.sql'), 'CREATE TABLE b (y INTEGER); INSERT INTO missing VALUES (1);');
    const db = new Database(':memory:');
    try {
      expect(() => migrate(db, loadMigrations(dir))).toThrow(/no such table: missing/);
      expect(db.prepare('SELECT max(version) AS v FROM schema_migrations').get()).toEqual({ v: 1 });
      expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'b'").get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it('a database from a newer version is refused with a clear message, in process and from the CLI', async () => {
    const dbPath = join(temp.dir, 'newer.db');
    const collector = await startTestCollector(temp.dir, { dbPath });
    await collector.close();
    const db = new Database(dbPath);
    db.prepare("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (99, 'future', 'x', 'then')").run();
    db.close();

    const error = await startTestCollector(temp.dir, { dbPath }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    const latest = loadMigrations(findMigrationsDir('sqlite')).at(-1)?.version;
    expect((error as Error).message).toMatch(new RegExp(`schema version 99, newer than this extscope understands \\(${latest}\\).*upgrade extscope`));
    const cli = await runCli(['collector', '--db', dbPath, '--port', '0']);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/newer than this extscope understands/);
    expect(existsSync(dbPath)).toBe(true);
  });
});
