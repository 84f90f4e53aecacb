/**
 * docker-compose.yml and the Dockerfile name commands, files, flags, ports and variables of this package; no
 * Docker engine runs here, so each one is checked against the package and the code's defaults, and the demo
 * service's command is run for real against a collector with the compose setup's tokens.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DEFAULT_GRPC_PORT, DEFAULT_PORT, ENVIRONMENT } from '../../collector/config.js';
import { type RunningCollector, startCollector } from '../../collector/index.js';
import { ROOT } from '../support/processes.js';

const run = promisify(execFile);

interface Service {
  build: string | { context: string; target?: string };
  image?: string;
  profiles?: string[];
  ports?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[] };
  stop_signal?: string;
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service>; volumes: Record<string, unknown> };
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const lines = dockerfile.split('\n');

/** The Dockerfile's stages: name (or `default` for the last, unnamed one) → its lines. */
function stages(): Map<string, string[]> {
  const result = new Map<string, string[]>();
  let current: string[] = [];
  for (const line of lines) {
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) {
      current = [];
      result.set(from[1] ?? 'default', current);
    }
    current.push(line);
  }
  return result;
}

function cmdOf(stage: string[]): string[] {
  const line = stage.filter((text) => text.startsWith('CMD ')).pop();
  expect(line, 'a CMD in exec form').toBeDefined();
  return JSON.parse(line!.slice(4)) as string[];
}

/** `--flag value` pairs of a command line. */
function flagValues(args: string[]): Map<string, string> {
  const values = new Map<string, string>();
  for (let index = 0; index < args.length; index++) if (args[index]!.startsWith('--')) values.set(args[index]!, args[index + 1]!);
  return values;
}

/** Variable names in `${NAME…}` references and as keys. */
const KNOWN_VARIABLES = new Set(ENVIRONMENT.map((variable) => variable.name));

let collector: RunningCollector | undefined;
let dir: string | undefined;
afterEach(async () => {
  await collector?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  collector = undefined;
  dir = undefined;
});

describe('docker-compose.yml against the package', () => {
  const all = stages();
  const collectorStage = all.get('default')!;
  const collectorService = compose.services['collector']!;
  const demoService = compose.services['demo']!;

  it('the collector: its command, flags, port, database directory and healthcheck match the CLI and its defaults', async () => {
    const [program, script, command, ...args] = cmdOf(collectorStage);
    expect([program, command]).toEqual(['node', 'collector']);
    expect(existsSync(join(ROOT, script!)), script).toBe(true);
    const { stdout: help } = await run(process.execPath, [join(ROOT, script!), 'collector', '--help']);
    const flags = flagValues(args);
    for (const flag of flags.keys()) expect(help, `${flag} in extscope collector --help`).toContain(flag);
    expect(Number(flags.get('--port'))).toBe(DEFAULT_PORT);
    expect(collectorStage).toContain(`EXPOSE ${DEFAULT_PORT} ${DEFAULT_GRPC_PORT}`);
    expect(collectorService.ports).toEqual([`${DEFAULT_PORT}:${DEFAULT_PORT}`, `${DEFAULT_GRPC_PORT}:${DEFAULT_GRPC_PORT}`]);
    // The database lives in the volume the compose file mounts, which the image declares.
    const [volume, mountPoint] = collectorService.volumes![0]!.split(':');
    expect(posix.dirname(flags.get('--db')!)).toBe(mountPoint);
    expect(collectorStage).toContain(`VOLUME ["${mountPoint}"]`);
    expect(Object.keys(compose.volumes)).toContain(volume);
    expect(collectorService.healthcheck!.test.join(' ')).toContain(`http://127.0.0.1:${DEFAULT_PORT}/healthz`);
    // Every variable it sets is one the collector reads.
    for (const name of Object.keys(collectorService.environment!)) expect(KNOWN_VARIABLES.has(name), name).toBe(true);
  });

  it("the final image copies the build's outputs the collector loads at run time", () => {
    const copied = collectorStage.filter((line) => line.startsWith('COPY --from=')).map((line) => line.split(/\s+/)[2]!);
    for (const path of ['/app/dist', '/app/dashboard/dist', '/app/migrations', '/app/node_modules', '/app/package.json']) expect(copied).toContain(path);
    // The agent package, which node_modules links to as a workspace (the CLI's wrap and proxy load it).
    const { workspaces } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
    expect(workspaces).toEqual(['agent']);
    for (const path of ['/app/agent/package.json', '/app/agent/dist']) expect(copied).toContain(path);
    expect(readlinkSync(join(ROOT, 'node_modules', '@extscope', 'agent'))).toBe(join('..', '..', 'agent'));
    // What those paths hold after `npm run build` here.
    for (const path of [
      'dist/bin/extscope.js',
      'dashboard/dist/index.html',
      'migrations/sqlite/001_initial.sql',
      'agent/dist/agent/wrap/wrap.js',
      'agent/dist/agent/proxy/proxy.js',
    ])
      expect(existsSync(join(ROOT, path)), path).toBe(true);
  });

  it('the demo service: a profile of its own, a Dockerfile target that exists, waiting for a healthy collector', () => {
    expect(demoService.profiles).toEqual(['demo']);
    const build = demoService.build as { context: string; target: string };
    expect(build.context).toBe('.');
    expect(all.has(build.target), `stage ${build.target}`).toBe(true);
    expect(all.get(build.target)![0]).toMatch(/^FROM build AS demo/);
    expect(all.get(build.target)).toContain('COPY demo ./demo');
    expect(demoService.depends_on).toEqual({ collector: { condition: 'service_healthy' } });
    // Ctrl-C is what the demo stops on (it stops its servers and clients in order).
    expect(demoService.stop_signal).toBe('SIGINT');
    for (const name of Object.keys(demoService.environment!)) expect(KNOWN_VARIABLES.has(name), name).toBe(true);
    expect(demoService.environment).toEqual({
      EXTSCOPE_INGEST_TOKEN: collectorService.environment!['EXTSCOPE_INGEST_TOKEN'],
      EXTSCOPE_READ_TOKEN: collectorService.environment!['EXTSCOPE_READ_TOKEN'],
    });
  });

  it("the demo's command, run here against a collector with tokens, fills the matrix and stops on SIGINT", { timeout: 120_000 }, async () => {
    const [program, script, ...args] = cmdOf(all.get('demo')!);
    expect(program).toBe('node');
    expect(existsSync(join(ROOT, script!)), script).toBe(true);
    const flags = flagValues(args);
    const { stdout: help } = await run(process.execPath, [join(ROOT, script!), '--help']);
    for (const flag of flags.keys()) expect(help, `${flag} in the demo's --help`).toContain(flag);
    // It reaches the collector by its service name, on the default port.
    const target = new URL(flags.get('--collector')!);
    expect(Object.keys(compose.services)).toContain(target.hostname);
    expect(Number(target.port)).toBe(DEFAULT_PORT);
    expect(Number(new URL(flags.get('--dashboard-url')!).port)).toBe(DEFAULT_PORT);

    dir = await mkdtemp(join(tmpdir(), 'extscope-compose-demo-'));
    const tokens = { ingestToken: 'ingest-compose-0123456789', readToken: 'read-compose-0123456789' };
    collector = await startCollector({ dbPath: join(dir, 'extscope.db'), port: 0, ...tokens });
    const local = args.map((arg, index) => (args[index - 1] === '--collector' ? collector!.url : arg));
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env))
      if (value !== undefined && !key.startsWith('OTEL_') && !key.startsWith('EXTSCOPE_')) env[key] = value;
    const demo = spawn(process.execPath, [script!, ...local], {
      cwd: ROOT,
      env: { ...env, EXTSCOPE_INGEST_TOKEN: tokens.ingestToken, EXTSCOPE_READ_TOKEN: tokens.readToken },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    demo.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    demo.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => demo.once('exit', (code) => resolve(code)));
    try {
      let rows = 0;
      for (let attempt = 0; attempt < 120 && rows < 4; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        const response = await fetch(`${collector.url}/api/v1/matrix`, { headers: { authorization: `Bearer ${tokens.readToken}` } });
        rows = ((await response.json()) as { rows: unknown[] }).rows.length;
      }
      expect(rows, output).toBeGreaterThanOrEqual(4);
      expect(output).toContain('Open http://localhost:4318/');
    } finally {
      demo.kill('SIGINT');
    }
    expect(await exited, output).toBe(0);
  });
});
