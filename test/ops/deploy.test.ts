/**
 * docker-compose.yml and the Dockerfile cannot be run here (no Docker engine). This checks what can be: that
 * they parse, reference what exists, and that the container's command, environment and healthcheck work when
 * run directly on this machine.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../support/processes.js';

const run = promisify(execFile);

interface ComposeService {
  build: string;
  ports: string[];
  environment: Record<string, string>;
  volumes: string[];
  healthcheck: { test: string[] };
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, ComposeService>; volumes: Record<string, unknown> };
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const collector = compose.services['collector']!;

/** The last CMD of the Dockerfile, in its exec (JSON) form. */
function containerCommand(): string[] {
  const line = dockerfile
    .split('\n')
    .filter((text) => text.startsWith('CMD '))
    .pop();
  return JSON.parse(line!.slice(4)) as string[];
}

let child: ChildProcess | undefined;
let dir: string | undefined;
afterEach(async () => {
  child?.kill('SIGTERM');
  if (child !== undefined && child.exitCode === null) await new Promise((resolve) => child!.once('exit', resolve));
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  child = undefined;
  dir = undefined;
});

describe('docker-compose.yml and Dockerfile', () => {
  it('compose builds this directory, publishes the OTLP ports (HTTP and gRPC), keeps data in a volume, and requires both tokens', () => {
    expect(collector.build).toBe('.');
    expect(existsSync(join(ROOT, 'Dockerfile'))).toBe(true);
    expect(collector.ports).toEqual(['4318:4318', '4317:4317']);
    const [volume, mountPoint] = collector.volumes[0]!.split(':');
    expect(mountPoint).toBe('/data');
    expect(Object.keys(compose.volumes)).toContain(volume);
    // ${VAR:?message} makes compose refuse to start without the variable.
    expect(collector.environment['EXTSCOPE_INGEST_TOKEN']).toMatch(/^\$\{EXTSCOPE_INGEST_TOKEN:\?.+\}$/);
    expect(collector.environment['EXTSCOPE_READ_TOKEN']).toMatch(/^\$\{EXTSCOPE_READ_TOKEN:\?.+\}$/);
  });

  it('the Dockerfile copies only what exists', () => {
    const sources = dockerfile
      .split('\n')
      .filter((line) => line.startsWith('COPY ') && !line.includes('--from'))
      .flatMap((line) => line.slice(5).trim().split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(4);
    for (const source of sources) expect(existsSync(join(ROOT, source)), source).toBe(true);
  });

  it("the container's command serves with the compose environment, and the compose healthcheck passes", async () => {
    dir = await mkdtemp(join(tmpdir(), 'extscope-deploy-'));
    const [program, ...args] = containerCommand();
    expect(program).toBe('node');
    // Same command, but a free port and a temporary database instead of the container's /data.
    const local = args.map((arg, index) => (args[index - 1] === '--port' ? '0' : args[index - 1] === '--db' ? join(dir!, 'extscope.db') : arg));
    expect(local).toContain('0.0.0.0');
    child = spawn(process.execPath, local, {
      cwd: ROOT,
      env: { ...process.env, EXTSCOPE_INGEST_TOKEN: 'ingest-secret-0123456789', EXTSCOPE_READ_TOKEN: 'read-secret-9876543210' },
    });
    let output = '';
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line: ${output}`)), 20_000);
      child!.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        const match = /listening at http:\/\/[^:]+:(\d+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolve(Number(match[1]));
        }
      });
    });
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/api/v1/matrix`)).status).toBe(401);
    expect((await fetch(`${base}/api/v1/matrix`, { headers: { authorization: 'Bearer read-secret-9876543210' } })).status).toBe(200);

    const [kind, healthProgram, ...healthArgs] = collector.healthcheck.test;
    expect([kind, healthProgram]).toEqual(['CMD', 'node']);
    const probe = healthArgs.map((arg) => arg.replace('127.0.0.1:4318', `127.0.0.1:${port}`));
    await expect(run(process.execPath, probe)).resolves.toBeDefined();
  });
});
