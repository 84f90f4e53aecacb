/**
 * Command-line mistakes a new user makes, each answered with one stderr line that says what to do, exit code 2, and
 * nothing created: no database file, no directory, no stack trace, no line of a library's own.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { type Server, createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../support/processes.js';
import { runCli, tempDir } from './helpers/collector.js';

/** Exactly one line on stderr, no stack frame; resolves with it. */
function oneLine(stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line.length > 0);
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/^\s+at /m);
  return lines[0]!;
}

/** A port held by another program on 127.0.0.1. */
async function holdPort(): Promise<{ port: number; release(): void }> {
  const holder: Server = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  return { port: (holder.address() as { port: number }).port, release: () => holder.close() };
}

const inUse = (port: number): string =>
  `extscope collector: 127.0.0.1:${port} is already in use (another extscope collector?): stop it, or choose other ports with --port (OTLP/HTTP, API, page) and --grpc-port (OTLP/gRPC, or off)`;

describe('CLI mistakes: one line with the fix, exit code 2, nothing created', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('the gRPC port in use: the address and the options, no grpc-js line, no stack, no database file', async () => {
    const held = await holdPort();
    try {
      const { code, stderr } = await runCli(['collector', '--port', '0', '--grpc-port', String(held.port), '--db', join(temp.dir, 'c.db')]);
      expect(code).toBe(2);
      expect(oneLine(stderr)).toBe(inUse(held.port));
      expect(readdirSync(temp.dir)).toEqual([]);
    } finally {
      held.release();
    }
  });

  it('a failed start (the HTTP port in use) with the default ./data location leaves neither a database file nor the directory', async () => {
    const held = await holdPort();
    try {
      const result = spawnSync(process.execPath, [join(ROOT, 'dist/bin/extscope.js'), 'collector', '--port', String(held.port), '--grpc-port', 'off'], {
        cwd: temp.dir,
        encoding: 'utf8',
        env: { ...process.env, EXTSCOPE_DB: '', EXTSCOPE_INGEST_TOKEN: '', EXTSCOPE_READ_TOKEN: '' },
        timeout: 20_000,
      });
      expect(result.status).toBe(2);
      expect(oneLine(result.stderr)).toBe(inUse(held.port));
      expect(readdirSync(temp.dir)).toEqual([]);
    } finally {
      held.release();
    }
  });

  it('--db in a directory that does not exist: refused, the directory is not created', async () => {
    const missing = join(temp.dir, 'no-such-dir', 'sub');
    const { code, stderr } = await runCli(['collector', '--port', '0', '--grpc-port', 'off', '--db', join(missing, 'x.db')]);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toBe(
      `extscope collector: --db ${join(missing, 'x.db')}: the directory ${missing} does not exist; create it (mkdir -p ${missing}) or give another --db`,
    );
    expect(existsSync(join(temp.dir, 'no-such-dir'))).toBe(false);
  });

  it('an unknown collector option: one line naming it and where the options are listed', async () => {
    const { code, stderr } = await runCli(['collector', '--grpc', '4317']);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toBe("extscope collector: Unknown option '--grpc' (extscope collector --help lists the options)");
  });

  it('extscope db --help lists db backup and db copy (exit 0); an unknown db subcommand is one line, exit 2', async () => {
    const help = await runCli(['db', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: extscope db <backup\|copy>/);
    expect(help.stdout).toContain('db backup PATH');
    expect(help.stdout).toContain('db copy');
    const wrong = await runCli(['db', 'restore']);
    expect(wrong.code).toBe(2);
    expect(oneLine(wrong.stderr)).toBe('extscope db: unknown subcommand "restore": db backup or db copy (extscope db --help)');
  });

  it('proxy --listen with a port alone: the HOST:PORT it needs, spelled out', async () => {
    const { code, stdout, stderr } = await runCli(['proxy', '--listen', '23731']);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(oneLine(stderr)).toBe(
      "extscope proxy: --listen takes a host and a port: --listen 127.0.0.1:23731 (this machine only), got '23731' (extscope proxy --help shows every option)",
    );
  });

  it('proxy --upstream of another scheme: the schemes it takes, before anything missing is named', async () => {
    const { code, stdout, stderr } = await runCli(['proxy', '--upstream', 'ftp://x']);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(oneLine(stderr)).toBe(
      "extscope proxy: --upstream must be an http:// or https:// URL, got the scheme 'ftp:' (the MCP server's Streamable HTTP address, e.g. http://127.0.0.1:3000) (extscope proxy --help shows every option)",
    );
  });

  it('the demo with an unknown option: one line, exit 2, nothing started', () => {
    const result = spawnSync(process.execPath, [join(ROOT, 'scripts/demo.mjs'), '--grpc', '1'], { encoding: 'utf8', timeout: 20_000 });
    expect(result.status).toBe(2);
    expect(result.stdout).toBe('');
    expect(oneLine(result.stderr)).toBe("demo: Unknown option '--grpc' (npm run demo -- --help lists the options)");
  });

  it('the demo lists --grpc-port and EXTSCOPE_GRPC_PORT in its help', () => {
    const result = spawnSync(process.execPath, [join(ROOT, 'scripts/demo.mjs'), '--help'], { encoding: 'utf8', timeout: 20_000 });
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/--grpc-port PORT\|off +the collector's OTLP\/gRPC port \(env EXTSCOPE_GRPC_PORT, default 4317/);
  });
});
