import { Agent } from 'node:http';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildCollector, matrix, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { DELTA, MINUTE_NS, encodeMetrics, extensionPoint, metricsRequest, msToNs, requestPoint } from '../collector/helpers/otlp.js';
import { percentile, pick, rssOf } from './full.js';

/**
 * 200 agents (distinct service instances) exporting at once over OTLP/HTTP protobuf, round after round, as
 * their periodic readers would: no errors, nothing lost, and the ingest latency reported.
 */

const AGENTS = 200;
const ROUNDS = pick(3, 15);
const TASKS = 'io.modelcontextprotocol/tasks';

function post(url: string, body: Buffer, agent: Agent): Promise<{ status: number; ms: number }> {
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${url}/v1/metrics`,
      { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length } },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - start }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

describe('200 concurrent agents', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let child: ChildCollector;

  beforeAll(async () => {
    temp = await tempDir();
    // The default EXTSCOPE_MAX_IN_FLIGHT (32) would turn most of a 200-wide burst away with 503s, which
    // exporters retry; this scenario asks for none, so the bound is raised to the fleet size.
    child = await spawnCollector(join(temp.dir, 'agents.db'), [], { EXTSCOPE_MAX_IN_FLIGHT: String(AGENTS) });
  });
  afterAll(async () => {
    child.child.kill('SIGKILL');
    await child.exited;
    await temp.cleanup();
  });

  it(`${AGENTS} instances × ${ROUNDS} rounds at once over protobuf: every export 200, the matrix equal to what was sent`, async () => {
    const agents = Array.from({ length: AGENTS }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    const base = msToNs(Date.now()) - BigInt(ROUNDS + 1) * MINUTE_NS;
    const latencies: number[] = [];
    const statuses: number[] = [];
    let expected = 0;
    let expectedNegotiated = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const end = base + BigInt(round + 1) * MINUTE_NS;
      const bodies = agents.map((_, index) => {
        const count = (index % 5) + 1;
        expected += 2 * count;
        expectedNegotiated += count;
        return encodeMetrics(
          metricsRequest({
            resource: { service: `svc-${index % 10}`, instance: `agent-${index}` },
            temporality: DELTA,
            requests: [
              requestPoint({ client: 'claude-code', count, startNs: end - MINUTE_NS, timeNs: end }),
              requestPoint({ client: 'cursor', count, startNs: end - MINUTE_NS, timeNs: end }),
            ],
            extensions: [
              extensionPoint({ client: 'claude-code', count, startNs: end - MINUTE_NS, timeNs: end, id: TASKS, clientDeclared: true, serverDeclared: true }),
            ],
          }),
        );
      });
      const results = await Promise.all(bodies.map((body, index) => post(child.url, body, agents[index]!)));
      for (const result of results) {
        statuses.push(result.status);
        latencies.push(result.ms);
      }
    }
    for (const agent of agents) agent.destroy();
    latencies.sort((a, b) => a - b);
    const { peak } = await rssOf(child.child.pid as number);
    const view = await matrix(child.url);
    const stored = view.rows.reduce((sum, row) => sum + row.requests, 0);
    const negotiated = view.rows.find((row) => row.client === 'claude-code')?.extensions.find((extension) => extension.id === TASKS)?.negotiated ?? 0;
    console.log(
      `[faults] ${AGENTS} agents × ${ROUNDS} rounds (${statuses.length} exports): ingest latency p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${(latencies.at(-1) ?? 0).toFixed(1)} ms; requests expected ${expected}, stored ${stored}; collector peak RSS ${peak.toFixed(0)} MB`,
    );
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(stored).toBe(expected);
    expect(negotiated).toBe(expectedNegotiated);
  });
});
