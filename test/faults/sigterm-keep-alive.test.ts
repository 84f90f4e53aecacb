import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildCollector, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { MINUTE_NS, encodeMetrics, metricsRequest, msToNs, requestPoint } from '../collector/helpers/otlp.js';
import { matrixRequests } from '../support/counting-clients.js';

/**
 * Issue 42, finding 8 (SIGTERM): agents export over keep-alive connections, and at SIGTERM the collector closed the
 * connections it saw idle at once, where each busy agent's next export was already on its way: one reset per
 * keep-alive connection (ECONNRESET), an export neither answered nor known to be lost. Now every request that reaches
 * the collector is answered (200, or 503 while it drains) and new connections are refused (ECONNREFUSED), an
 * export whose body is arriving at SIGTERM on a keep-alive connection is answered 200, and the process exits 0
 * with every acknowledged export stored.
 */

const LOOPS = 8;
/** What a sender may see: an answer, or a connection refused once the listener has closed. Never a reset. */
const CLEAN = new Set(['200', '503', 'ECONNREFUSED']);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function exportBody(instance: string, count: number): Buffer {
  const t = msToNs(Date.now());
  return encodeMetrics(
    metricsRequest({ resource: { instance }, requests: [requestPoint({ client: 'keep-alive', count, startNs: t - MINUTE_NS, timeNs: t })] }),
  );
}

/** POSTs `body` on `agent`; the answer's status, or the error's code. `half`: sends half the body, and the rest when `finish` is called. */
function post(url: string, agent: Agent, body: Buffer, half = false): { outcome: Promise<string>; finish(): void } {
  const request = httpRequest(`${url}/v1/metrics`, {
    method: 'POST',
    agent,
    headers: { 'content-type': 'application/x-protobuf', 'content-length': String(body.length) },
  });
  const outcome = new Promise<string>((resolve) => {
    request.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(String(response.statusCode)));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
  const split = Math.floor(body.length / 2);
  if (half) request.write(body.subarray(0, split));
  else request.end(body);
  return { outcome, finish: () => request.end(body.subarray(split)) };
}

describe('SIGTERM answers what keep-alive connections carry', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let again: ChildCollector | undefined;
  beforeAll(async () => {
    dir = await tempDir();
  });
  afterAll(async () => {
    again?.child.kill('SIGKILL');
    await again?.exited;
    await dir.cleanup();
  });

  it(
    `${LOOPS} agents exporting back to back on keep-alive connections and one export half-sent: SIGTERM answers every request that arrived (no reset), the process exits 0, every acknowledged export is stored`,
    { timeout: 120_000 },
    async () => {
      const dbPath = join(dir.dir, 'extscope.db');
      const collector = await spawnCollector(dbPath);
      const agent = new Agent({ keepAlive: true, maxSockets: LOOPS });
      const outcomes: Record<string, number> = {};
      let acknowledged = 0;
      let stop = false;
      const loops = Array.from({ length: LOOPS }, async (_, loop) => {
        for (let index = 0; !stop && index < 100_000; index++) {
          const outcome = await post(collector.url, agent, exportBody(`loop-${loop}-${index}`, 1)).outcome;
          outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
          if (outcome === '200') acknowledged++;
          if (outcome === 'ECONNREFUSED') break;
        }
      });

      // An export of 5 on a keep-alive connection that has already carried one: half its body is there at SIGTERM.
      const own = new Agent({ keepAlive: true, maxSockets: 1 });
      expect(await post(collector.url, own, exportBody('half-first', 1)).outcome).toBe('200');
      acknowledged++;
      const half = post(collector.url, own, exportBody('half-second', 5), true);
      await sleep(500);
      collector.child.kill('SIGTERM');
      await sleep(200);
      half.finish();
      const halfOutcome = await half.outcome;
      const exited = await collector.exited;
      stop = true;
      await Promise.all(loops);
      agent.destroy();
      own.destroy();

      again = await spawnCollector(dbPath);
      const stored = await matrixRequests(again.url);
      console.log(
        `[faults] SIGTERM under ${LOOPS} keep-alive loops: ${JSON.stringify(outcomes)}; the half-sent export: ${halfOutcome}; exit ${JSON.stringify(exited)}; stored ${JSON.stringify(stored)}`,
      );
      expect(Object.keys(outcomes).filter((outcome) => !CLEAN.has(outcome))).toEqual([]);
      expect(halfOutcome).toBe('200');
      expect(exited).toEqual({ code: 0, signal: null });
      // Each loop export counted 1, the first export on the half-sent one's connection 1, the half-sent one 5.
      expect(stored).toEqual({ 'keep-alive': acknowledged + 5 });
    },
  );
});
