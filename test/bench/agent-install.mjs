#!/usr/bin/env node
/**
 * What installing the agent costs a server project: `npm pack` of agent/ (or the tarball given), installed with
 * `@opentelemetry/api` (its peer) into an empty folder, as a user's `npm install` does. Prints the packages npm
 * installed (`npm ls --all`) and the size of `node_modules` (`du -sk`). With `--grpc`, the optional gRPC exporters
 * are installed too.
 *
 *     node test/bench/agent-install.mjs [--grpc] [TARBALL]
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { cleanEnv, pack } from '../support/pack.mjs';
import { checkExact } from './lib/exactness.mjs';

const run = promisify(execFile);
const args = process.argv.slice(2);
const grpc = args.includes('--grpc');
const given = args.find((arg) => !arg.startsWith('--'));

const dir = await mkdtemp(join(tmpdir(), 'extscope-agent-install-'));
try {
  const tarball = given === undefined ? (await pack('agent', dir)).tarball : resolve(given);
  const project = join(dir, 'server');
  await run('mkdir', [project]);
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'server', private: true, type: 'module' }));
  const specs = [
    tarball,
    '@opentelemetry/api@1.9.0',
    ...(grpc ? ['@opentelemetry/exporter-metrics-otlp-grpc@0.223.0', '@opentelemetry/exporter-trace-otlp-grpc@0.223.0'] : []),
  ];
  const started = Date.now();
  const { stderr } = await run('npm', ['install', '--no-audit', '--no-fund', ...specs], {
    cwd: project,
    env: cleanEnv(),
    maxBuffer: 16 << 20,
    timeout: 900_000,
  });
  const seconds = (Date.now() - started) / 1000;
  const { stdout: listed } = await run('npm', ['ls', '--all', '--parseable'], { cwd: project, env: cleanEnv(), maxBuffer: 16 << 20 });
  const packages = listed.split('\n').filter((line) => line.includes('node_modules')).length;
  const { stdout: du } = await run('du', ['-sk', join(project, 'node_modules')]);
  const kib = Number(du.split('\t')[0]);
  console.log(
    JSON.stringify({
      tarball: tarball.split('/').pop(),
      grpc,
      packages,
      nodeModulesMiB: Math.round((kib / 1024) * 10) / 10,
      installSeconds: seconds,
      engineWarnings: stderr.includes('EBADENGINE'),
    }),
  );
  // What the agent's own install must not hold (the collector's stack), unless a given tarball is measured.
  if (given === undefined) {
    const heavy = listed.split('\n').filter((line) => /node_modules\/(fastify|pg|better-sqlite3|@grpc\/grpc-js)$/.test(line));
    checkExact(
      `database, HTTP framework and gRPC packages in the agent's install${grpc ? ' (gRPC asked for)' : ''}`,
      heavy.filter((line) => !(grpc && line.endsWith('@grpc/grpc-js'))).length,
      0,
    );
    checkExact('EBADENGINE warnings on this Node.js', stderr.split('EBADENGINE').length - 1, 0);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
