import { execFile } from 'node:child_process';
import { type Server, type Socket, createServer } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OtlpSink, startOtlpSink } from '../../support/otlp-sink.js';
import { ROOT, agentEnv, fixture, nodeArgs } from '../../support/processes.js';

const run = promisify(execFile);

/** A collector that accepts connections and never answers: the worst case for an exporter. */
async function blackhole(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function probe(endpoint: string, requests: number, distinctIds: number, extra: Record<string, string> = {}) {
  const { stdout, stderr } = await run(process.execPath, ['--expose-gc', ...nodeArgs(fixture('load-probe.mjs'), true), String(requests), String(distinctIds)], {
    cwd: ROOT,
    env: agentEnv(endpoint, { OTEL_METRIC_EXPORT_INTERVAL: '100', ...extra }),
    timeout: 60_000,
  });
  return { result: JSON.parse(stdout) as Record<string, number>, stderr };
}

let hole: Awaited<ReturnType<typeof blackhole>>;
let sink: OtlpSink;
beforeAll(async () => {
  hole = await blackhole();
  sink = await startOtlpSink();
});
afterAll(async () => {
  await hole.close();
  await sink.close();
});

describe('an unreachable collector', () => {
  it('shutdown() returns within 2 s when the collector never answers; every request is counted and the streams stay within their caps', async () => {
    const { result } = await probe(hole.url, 3000, 3000, { EXTSCOPE_SPANS: 'true' });
    expect(result['requestsCounted']).toBe(3000 + 1); // and the server/discover probe
    expect(result['shutdownMs']).toBeLessThan(2000);
    // 3000 distinct junk ids but the per-metric stream cap (10,000) and the id cap (1,000) hold.
    expect(result['extensionStreams']).toBeLessThanOrEqual(10_001);
    expect(result['overflowed']).toBeGreaterThan(0);
    expect(result['agentErrors']).toBe(0);
  });

  it('shutdown() returns within 2 s when nothing listens on the port at all', async () => {
    const closed = await blackhole();
    const url = closed.url;
    await closed.close();
    const { result } = await probe(url, 200, 10);
    expect(result['shutdownMs']).toBeLessThan(2000);
    expect(result['requestsCounted']).toBe(201);
  });
});

