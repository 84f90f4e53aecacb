import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { type Server, createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, ENVIRONMENT } from '../../collector/config.js';
import { DEFAULT_RETENTION } from '../../collector/store/store.js';
import { ROOT } from '../support/processes.js';
import { runCli, tempDir } from './helpers/collector.js';

const CLI = join(ROOT, 'dist/bin/extscope.js');

/** A user error is one line on stderr: no stack trace, nothing else. */
function oneLine(stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line.length > 0);
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
  return lines[0]!;
}

/** Runs `extscope collector` until its "open" line is on stderr, then stops it; resolves with both streams. */
async function startAndStop(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const child = spawn(process.execPath, [CLI, 'collector', '--port', '0', '--grpc-port', '0', ...args], {
    env: { ...process.env, EXTSCOPE_INGEST_TOKEN: '', EXTSCOPE_READ_TOKEN: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "open" line: ${stderr}`)), 20_000);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (/\bopen http:\/\/\S+\/ in a browser/.test(stderr)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.kill('SIGTERM');
  const code = await exited;
  return { stdout, stderr, code };
}

describe('extscope collector (the CLI)', () => {
  it('lists every environment variable it reads in its help, with the defaults the configuration has', async () => {
    const { code, stdout } = await runCli(['collector', '--help']);
    expect(code).toBe(0);
    for (const variable of ENVIRONMENT) {
      const line = stdout.split('\n').find((text) => text.trimStart().startsWith(`${variable.name} `));
      expect(line, variable.name).toBeDefined();
      if (variable.default !== undefined)
        expect(line, variable.name).toMatch(new RegExp(`\\(default ${String(variable.default).replace(/[./]/g, '\\$&')}\\)$`));
    }
    // …and those are the configuration's own.
    expect(stdout).toMatch(new RegExp(`EXTSCOPE_DEDUP_HOURS .*\\(default ${DEFAULT_RETENTION.dedupHours}\\)`));
    expect(stdout).toMatch(new RegExp(`EXTSCOPE_MAX_BODY_BYTES .*\\(default ${DEFAULT_LIMITS.maxBodyBytes}\\)`));
  });

  it('refuses a malformed setting with a message naming it, and exit code 2', async () => {
    for (const [env, message] of [
      [{ EXTSCOPE_DEDUP_HOURS: 'soon' }, /EXTSCOPE_DEDUP_HOURS must be a number \(got "soon"\)/],
      [{ EXTSCOPE_SYNCHRONOUS: 'fast' }, /synchronous must be normal or full \(got "fast"\)/],
    ] as const) {
      const { code, stderr } = await runCli(['collector', '--port', '0', '--db', '/nonexistent/never.db'], env);
      expect(code).toBe(2);
      expect(stderr).toMatch(message);
    }
    const port = await runCli(['collector', '--port', 'x']);
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/--port must be a number \(got "x"\)/);
  });

  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const { code, stdout } = await runCli(['--version']);
    expect(code).toBe(0);
    expect(stdout).toBe(`extscope ${version}\n`);
  });

  it('refuses a database URL of another scheme in one line, creating nothing', async () => {
    const temp = await tempDir();
    try {
      const child = spawn(process.execPath, [CLI, 'collector', '--port', '0', '--grpc-port', 'off', '--db', 'mysql://user:secret@db.example/metrics'], {
        cwd: temp.dir,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(2);
      expect(oneLine(stderr)).toBe('extscope collector: database "mysql://…": unknown URL scheme "mysql:"; give an SQLite file path or a postgres:// URL');
      expect(stderr).not.toContain('secret');
      expect(readdirSync(temp.dir)).toEqual([]);
    } finally {
      await temp.cleanup();
    }
  });

  it('a port in use is one line naming the address and the options that change it, exit code 2, and leaves no database file', async () => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    const temp = await tempDir();
    try {
      const { code, stderr } = await runCli(['collector', '--port', String(port), '--grpc-port', 'off', '--db', join(temp.dir, 'c.db')]);
      expect(code).toBe(2);
      expect(oneLine(stderr)).toBe(
        `extscope collector: 127.0.0.1:${port} is already in use (another extscope collector?): stop it, or choose other ports with --port (OTLP/HTTP, API, page) and --grpc-port (OTLP/gRPC, or off)`,
      );
      expect(readdirSync(temp.dir)).toEqual([]);
    } finally {
      holder.close();
      await temp.cleanup();
    }
  });

  it('a PostgreSQL server that refuses, or a database that does not exist, is one line with the fix, exit code 1', async () => {
    const refused = await runCli(['collector', '--port', '0', '--grpc-port', 'off', '--db', 'postgres://root:hunter2@127.0.0.1:1/test']);
    expect(refused.code).toBe(1);
    expect(oneLine(refused.stderr)).toMatch(
      /^extscope collector: cannot open the database: postgres:\/\/root(:\*+)?@127\.0\.0\.1:1\/test: .*ECONNREFUSED.*: is PostgreSQL running there\? Check the host and port in the URL$/,
    );
    expect(refused.stderr).not.toContain('hunter2');
    const missing = await runCli(['collector', '--port', '0', '--grpc-port', 'off', '--db', 'postgres://root@127.0.0.1:5432/extscope_no_such_database']);
    expect(missing.code).toBe(1);
    expect(oneLine(missing.stderr)).toMatch(
      /database "extscope_no_such_database" does not exist: create that database \(createdb NAME\) or fix the name at the end of the URL$/,
    );
  });

  it('logs JSON lines when stdout is not a terminal, pretty lines with --log-format pretty, and names the address to open plainly', async () => {
    const temp = await tempDir();
    try {
      const json = await startAndStop(['--db', join(temp.dir, 'a.db')]);
      expect(json.code).toBe(0);
      const lines = json.stdout.split('\n').filter((line) => line.length > 0);
      expect(lines.length).toBeGreaterThan(1);
      for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
      expect(json.stderr).toMatch(
        /^extscope collector: open (http:\/\/127\.0\.0\.1:\d+)\/ in a browser; agents export to \1 \(OTLP\/HTTP\) or 127\.0\.0\.1:\d+ \(OTLP\/gRPC\)\n$/,
      );

      const pretty = await startAndStop(['--db', join(temp.dir, 'b.db'), '--log-format', 'pretty']);
      expect(pretty.code).toBe(0);
      expect(pretty.stdout).toMatch(/^\[\d\d:\d\d:\d\d\] INFO: extscope collector listening on http:\/\/127\.0\.0\.1:\d+/m);
      expect(pretty.stdout.split('\n').some((line) => line.startsWith('{'))).toBe(false);
      expect(existsSync(join(temp.dir, 'b.db'))).toBe(true);

      const wrong = await runCli(['collector', '--log-format', 'xml']);
      expect(wrong.code).toBe(2);
      expect(oneLine(wrong.stderr)).toBe('extscope collector: --log-format must be pretty or json (got "xml")');
    } finally {
      await temp.cleanup();
    }
  });
});
