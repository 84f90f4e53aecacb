import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildCollector, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { countingClient, freePort, matrixRequests } from '../support/counting-clients.js';
import { ROOT, agentEnv, fixture, nodeArgs } from '../support/processes.js';

const EXPORT_INTERVAL_MS = 250;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let dir: Awaited<ReturnType<typeof tempDir>>;
let collector: ChildCollector | undefined;
let server: ChildProcess | undefined;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(async () => {
  for (const child of [server, collector?.child]) {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
  }
  await dir.cleanup();
});

describe('end to end: a collector killed and restarted mid-traffic', () => {
  it('every client is counted exactly as often as it was answered, including while the collector was down', async () => {
    const dbPath = join(dir.dir, 'extscope.db');
    const port = await freePort();
    const startCollector = () => spawnCollector(dbPath, ['--port', String(port)]);
    collector = await startCollector();
    const endpoint = collector.url;
    expect(endpoint).toBe(`http://127.0.0.1:${port}`);

    server = spawn(process.execPath, nodeArgs(fixture('v2-http-sessions.mjs'), true), {
      cwd: ROOT,
      env: agentEnv(endpoint, { OTEL_METRIC_EXPORT_INTERVAL: String(EXPORT_INTERVAL_MS), EXTSCOPE_SPANS: 'false' }),
    });
    const [line] = (await once(server.stdout!, 'data')) as [Buffer];
    const base = `http://127.0.0.1:${(JSON.parse(line.toString('utf8')) as { port: number }).port}`;

    const clients = [
      await countingClient('outage-modern-a', new URL(`${base}/mcp`), true),
      await countingClient('outage-modern-b', new URL(`${base}/mcp`), true),
      await countingClient('outage-legacy', new URL(`${base}/session`), false),
    ];
    expect(clients.map(({ client }) => client.getNegotiatedProtocolVersion())).toEqual(['2026-07-28', '2026-07-28', expect.stringMatching(/^2025-/)]);

    // Traffic from every client until told to stop (and never more than a bounded number of calls).
    let stop = false;
    const traffic = clients.map(async ({ client }) => {
      for (let i = 0; i < 5000 && !stop; i++) {
        const result = await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
        expect(result.isError).toBeFalsy();
        await sleep(5);
      }
    });

    // Some of it is stored before the collector dies.
    await expect.poll(async () => Object.keys(await matrixRequests(endpoint)).length, { timeout: 10_000, interval: 100 }).toBe(clients.length);
    collector.child.kill('SIGKILL');
    await collector.exited;
    const answered = () => clients.reduce((sum, { counted }) => sum + counted.answers, 0);
    const answeredAtKill = answered();

    await sleep(3000); // exports fail meanwhile; the traffic goes on
    const answeredAtRestart = answered();
    collector = await startCollector();
    await sleep(1500);
    stop = true;
    await Promise.all(traffic);
    for (const { client } of clients) await client.close();

    const expected = Object.fromEntries(clients.map(({ name, counted }) => [name, counted.answers]));
    expect(answeredAtRestart).toBeGreaterThan(answeredAtKill);
    expect(answered()).toBeGreaterThan(answeredAtRestart);
    // Nothing else is in the matrix: no anonymous row, no double count.
    await expect.poll(() => matrixRequests(endpoint), { timeout: 15_000, interval: 200 }).toEqual(expected);
    // And it stays exact: later exports (the same running totals) add nothing.
    await sleep(4 * EXPORT_INTERVAL_MS);
    expect(await matrixRequests(endpoint)).toEqual(expected);
  });
});
