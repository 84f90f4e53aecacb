import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildCollector, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { countingClient, freePort, matrixRequests } from '../support/counting-clients.js';
import { ROOT, agentEnv, fixture, nodeArgs } from '../support/processes.js';
import { percentile, pick, rssOf } from './full.js';

/**
 * A collector outage of several minutes (10 s under `npm test`: twenty export intervals) under real traffic:
 * instrumented servers (`node --import @extscope/agent/register`) answering real MCP clients. The servers' latency
 * must not change, the agent's memory must stay bounded while its exports fail, and once the collector is back the
 * matrix must equal the answers the clients received.
 */

const OUTAGE_MS = pick(10_000, 180_000);
const EXPORT_INTERVAL_MS = 500;
/**
 * The servers' V8 heap is capped: RSS alone cannot tell a leak from garbage V8 has not yet collected (it grows
 * its heap lazily under load), but a process whose memory grows without bound dies against the cap.
 */
const SERVER_HEAP_MB = 96;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let dir: Awaited<ReturnType<typeof tempDir>>;
let collector: ChildCollector | undefined;
const servers: ChildProcess[] = [];
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  for (const child of [...servers, collector?.child]) {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
  }
  await dir.cleanup();
});

describe('collector outage under real MCP traffic', () => {
  it(
    `a ${OUTAGE_MS / 1000} s outage: server latency unchanged, agent memory bounded, the matrix exact after recovery`,
    { timeout: OUTAGE_MS + 60_000 },
    async () => {
      const dbPath = join(dir.dir, 'extscope.db');
      const port = await freePort();
      collector = await spawnCollector(dbPath, ['--port', String(port)]);
      const endpoint = collector.url;

      const bases: string[] = [];
      for (let index = 0; index < 2; index++) {
        const server = spawn(process.execPath, nodeArgs(fixture('v2-http-sessions.mjs'), true), {
          cwd: ROOT,
          env: agentEnv(endpoint, {
            OTEL_METRIC_EXPORT_INTERVAL: String(EXPORT_INTERVAL_MS),
            EXTSCOPE_SPANS: 'false',
            OTEL_SERVICE_NAME: `outage-${index}`,
            NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${SERVER_HEAP_MB}`.trim(),
          }),
        });
        servers.push(server);
        const [line] = (await once(server.stdout!, 'data')) as [Buffer];
        bases.push(`http://127.0.0.1:${(JSON.parse(line.toString('utf8')) as { port: number }).port}`);
      }
      const clients = await Promise.all(
        bases.flatMap((base, index) => [
          countingClient(`outage-${index}-a`, new URL(`${base}/mcp`)),
          countingClient(`outage-${index}-b`, new URL(`${base}/mcp`)),
        ]),
      );

      type Phase = 'before' | 'during' | 'after';
      let phase = 'before' as Phase;
      const latencies: Record<Phase, number[]> = { before: [], during: [], after: [] };
      let stop = false;
      const traffic = clients.map(async ({ client }) => {
        for (let i = 0; i < 1_000_000 && !stop; i++) {
          const start = performance.now();
          const result = await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
          latencies[phase].push(performance.now() - start);
          expect(result.isError).toBeFalsy();
          await sleep(10);
        }
      });
      const memory = async (): Promise<number[]> => Promise.all(servers.map(async (server) => (await rssOf(server.pid as number)).rss));

      await expect.poll(async () => Object.keys(await matrixRequests(endpoint)).length, { timeout: 15_000, interval: 200 }).toBe(clients.length);
      await sleep(3000);
      const rssBefore = await memory();
      collector.child.kill('SIGKILL');
      await collector.exited;
      phase = 'during';
      const rssSamples: number[][] = [];
      for (let waited = 0; waited < OUTAGE_MS; waited += 2000) {
        await sleep(Math.min(2000, OUTAGE_MS - waited));
        rssSamples.push(await memory());
      }
      collector = await spawnCollector(dbPath, ['--port', String(port)]);
      phase = 'after';
      await sleep(3000);
      stop = true;
      await Promise.all(traffic);
      for (const { client } of clients) await client.close();

      const expected = Object.fromEntries(clients.map(({ name, counted }) => [name, counted.answers]));
      await expect.poll(() => matrixRequests(endpoint), { timeout: 20_000, interval: 250 }).toEqual(expected);

      const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
      const before = sorted(latencies.before);
      const during = sorted(latencies.during);
      const rssDuringMax = servers.map((_, index) => Math.max(...rssSamples.map((sample) => sample[index] ?? 0)));
      console.log(
        `[faults] outage ${OUTAGE_MS / 1000} s, ${servers.length} instrumented servers, ${clients.length} MCP clients, ${Object.values(expected).reduce((a, b) => a + b, 0)} answers: ` +
          `tool-call latency before p50 ${percentile(before, 50).toFixed(2)} / p99 ${percentile(before, 99).toFixed(2)} ms, during p50 ${percentile(during, 50).toFixed(2)} / p99 ${percentile(during, 99).toFixed(2)} ms; ` +
          `server RSS before ${rssBefore.map((v) => v.toFixed(0)).join('/')} MB, during max ${rssDuringMax.map((v) => v.toFixed(0)).join('/')} MB`,
      );
      // Latency within noise: the exporter's failures happen off the request path.
      expect(percentile(during, 50)).toBeLessThan(percentile(before, 50) * 2 + 5);
      expect(percentile(during, 99)).toBeLessThan(percentile(before, 99) * 3 + 50);
      // Memory bounded: the servers lived through the outage with their heap capped, and their RSS stayed within
      // the cap plus the process's fixed cost (the agent aggregates; it queues nothing while exports fail).
      for (const server of servers) expect(server.exitCode === null && server.signalCode === null).toBe(true);
      servers.forEach((_, index) => expect(rssDuringMax[index]!).toBeLessThan(SERVER_HEAP_MB + 160));
    },
  );
});
