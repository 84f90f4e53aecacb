#!/usr/bin/env node
/**
 * The time the agent adds to a process's exit: the exit-paths fixture (a v1 stdio server that answers a session,
 * then calls `process.exit()` on stdin EOF) run bare and with `--import @extscope/agent/register` against a real collector,
 * with no periodic export before the exit (the final export at exit carries the counts). Rounds alternate the two
 * variants; each reports the time from closing stdin to the exit, p50 and max.
 *
 *     node test/bench/agent-exit.mjs [rounds=10] [mode=exit]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCollector } from '../../dist/collector/index.js';
import { checkExact } from './lib/exactness.mjs';
import { alternated } from './lib/interleaved.mjs';
import { numericArgs } from './lib/smoke.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../fixtures/exit-paths.mjs', import.meta.url));
const [rounds] = numericArgs(process.argv.slice(2, 3), [[10, 2]]);
const mode = process.argv[3] ?? 'exit';

const LINES = [
  { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1.0.0' } } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list' },
];

function once(agent, endpoint) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_METRIC_EXPORT_INTERVAL: '600000', EXTSCOPE_SPANS: 'false' };
    const child = spawn(process.execPath, [...(agent ? ['--import', '@extscope/agent/register'] : []), FIXTURE, mode], { cwd: ROOT, env });
    let answers = 0;
    let started;
    child.stdout.on('data', (chunk) => {
      answers += chunk.toString('utf8').split('\n').length - 1;
      if (answers === 2 && started === undefined) {
        started = performance.now();
        child.stdin.end();
      }
    });
    child.stderr.on('data', (chunk) => {
      if (chunk.toString('utf8').includes('ready')) for (const line of LINES) child.stdin.write(`${JSON.stringify(line)}\n`);
    });
    child.on('error', reject);
    child.on('exit', () => resolve(performance.now() - started));
  });
}

const quantile = (values, q) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))];
const dir = await mkdtemp(join(tmpdir(), 'extscope-bench-exit-'));
const collector = await startCollector({ dbPath: join(dir, 'extscope.db'), port: 0 });
const times = await alternated(['bare', 'agent'], rounds, (variant) => once(variant === 'agent', collector.url));
// Each agent's only export is its final one, at exit: every session's requests (initialize, tools/list) must be in it.
const matrix = await (await fetch(`${collector.url}/api/v1/matrix?from=-1h`)).json();
checkExact(
  "requests the collector received from the agents' final exports",
  matrix.rows.reduce((sum, row) => sum + row.requests, 0),
  rounds * 2,
);
await collector.close();
await rm(dir, { recursive: true, force: true });
const row = (name) => `${name.padEnd(6)} p50 ${quantile(times[name], 0.5).toFixed(0)} ms  max ${Math.max(...times[name]).toFixed(0)} ms`;
console.log(`exit after stdin EOF (${mode}), ${rounds} rounds`);
console.log(row('bare'));
console.log(row('agent'));
