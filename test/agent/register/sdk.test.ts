import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
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

describe('the exported temporality', () => {
  /** Runs idle-server.mjs (two requests, then idle) until its request count reached the sink, then stops it. */
  async function exportedBy(env: Record<string, string>) {
    const child = spawn(process.execPath, nodeArgs(fixture('idle-server.mjs'), true), {
      cwd: ROOT,
      env: agentEnv(sink.url, { OTEL_METRIC_EXPORT_INTERVAL: '100', ...env }),
    });
    const instance = () => sink.points.filter((point) => point.metric === 'extscope.requests' && point.resource['process.pid'] === child.pid);
    try {
      await once(child.stdout, 'data');
      await expect.poll(() => instance().length, { timeout: 10_000 }).toBeGreaterThanOrEqual(3);
    } finally {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
    const points = instance();
    const byStream = new Map<string, typeof points>();
    for (const point of points) {
      const stream = JSON.stringify(point.attributes);
      byStream.set(stream, [...(byStream.get(stream) ?? []), point]);
    }
    return { temporalities: new Set(points.map((point) => point.temporality)), values: points.map((point) => point.value), streams: [...byStream.values()] };
  }

  it('is cumulative by default: every export carries the running totals, from one start time', async () => {
    const { temporalities, values, streams } = await exportedBy({});
    expect(temporalities).toEqual(new Set([2])); // CUMULATIVE
    // One stream per method (server/discover, tools/call), each counted once and re-sent unchanged every export.
    expect(streams).toHaveLength(2);
    expect(new Set(values)).toEqual(new Set([1]));
    for (const stream of streams) expect(new Set(stream.map((point) => point.startTimeUnixNano)).size).toBe(1);
  });

  it('is delta when OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=delta: later exports carry no increments', async () => {
    const { temporalities, values } = await exportedBy({ OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'delta' });
    expect(temporalities).toEqual(new Set([1])); // DELTA
    // Each of the two requests is in exactly one export.
    expect(values.filter((value) => value !== 0)).toEqual([1, 1]);
  });
});

describe('what the zero-code SDK sets up', () => {
  /** Runs context-probe.mjs under @extscope/agent/register: what it reports, and whether its request reached the sink. */
  async function setUpWith(env: Record<string, string>) {
    const child = spawn(process.execPath, nodeArgs(fixture('context-probe.mjs'), true), {
      cwd: ROOT,
      env: agentEnv(sink.url, { OTEL_METRIC_EXPORT_INTERVAL: '100', ...env }),
    });
    try {
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      const counted = () => sink.points.filter((point) => point.metric === 'extscope.requests' && point.resource['process.pid'] === child.pid).length;
      await expect.poll(counted, { timeout: 10_000 }).toBeGreaterThan(0);
      return JSON.parse(line.toString('utf8')) as { propagates: boolean; recording: boolean; tracingLoaded: boolean };
    } finally {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
  }

  it('with spans (the default): the tracing SDK loaded, a tracer provider and a context manager that carries context across an await', async () => {
    expect(await setUpWith({})).toEqual({ propagates: true, recording: true, tracingLoaded: true });
  });

  it('with metrics only (EXTSCOPE_SPANS=false, or OTEL_TRACES_EXPORTER=none): none of them, not even loaded, and the requests are still exported', async () => {
    expect(await setUpWith({ EXTSCOPE_SPANS: 'false' })).toEqual({ propagates: false, recording: false, tracingLoaded: false });
    expect(await setUpWith({ OTEL_TRACES_EXPORTER: 'none' })).toEqual({ propagates: false, recording: false, tracingLoaded: false });
  });
});
