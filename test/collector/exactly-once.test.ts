import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { matrix, spawnCollector, startTestCollector, tableCount, tempDir } from './helpers/collector.js';
import { CUMULATIVE, DELTA, MINUTE_NS, extensionPoint, metricsRequest, msToNs, postMetrics, requestPoint } from './helpers/otlp.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const now = (): bigint => msToNs(Date.now());

function deltaExport(client: string, count: number, startNs: bigint, timeNs: bigint, instance = 'i-1') {
  return metricsRequest({
    resource: { service: 'svc', instance },
    temporality: DELTA,
    requests: [requestPoint({ client, count, startNs, timeNs })],
    extensions: [extensionPoint({ client, count, startNs, timeNs, id: TASKS, clientDeclared: true, serverDeclared: true })],
  });
}

function cumulativeExport(client: string, total: number, startNs: bigint, timeNs: bigint) {
  return metricsRequest({
    resource: { service: 'svc', instance: 'i-1' },
    temporality: CUMULATIVE,
    requests: [requestPoint({ client, count: total, startNs, timeNs })],
  });
}

async function requestsOf(url: string, client: string): Promise<number> {
  return (await matrix(url)).rows.find((row) => row.client === client)?.requests ?? 0;
}

describe('exactly once: retries, overlaps, restarts', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('a retried delta export is not counted twice, in either encoding, also after a collector restart', async () => {
    const dbPath = join(temp.dir, 'x.db');
    let collector = await startTestCollector(temp.dir, { dbPath });
    const t = now();
    const first = deltaExport('alpha', 7, t - 2n * MINUTE_NS, t - MINUTE_NS);
    for (const format of ['protobuf', 'json', 'protobuf'] as const) {
      expect((await postMetrics(collector.url, first, { format })).status).toBe(200);
    }
    expect(await requestsOf(collector.url, 'alpha')).toBe(7);
    await collector.close();

    collector = await startTestCollector(temp.dir, { dbPath });
    expect((await postMetrics(collector.url, first)).status).toBe(200);
    // The next window of the same stream is new and counts.
    expect((await postMetrics(collector.url, deltaExport('alpha', 2, t - MINUTE_NS, t))).status).toBe(200);
    const view = await matrix(collector.url);
    await collector.close();
    expect(view.rows).toEqual([
      expect.objectContaining({
        client: 'alpha',
        requests: 9,
        extensions: [{ id: TASKS, clientDeclared: 9, serverAdvertised: 9, negotiated: 9, serverUnknown: 0 }],
      }),
    ]);
  });

  it('the same point twice in one export counts once; a forwarder re-batching old and new points adds only the new', async () => {
    const collector = await startTestCollector(temp.dir);
    const t = now();
    const window1 = requestPoint({ client: 'alpha', count: 4, startNs: t - 2n * MINUTE_NS, timeNs: t - MINUTE_NS });
    const window2 = requestPoint({ client: 'alpha', count: 6, startNs: t - MINUTE_NS, timeNs: t });
    const twice = metricsRequest({ resource: { instance: 'i-1' }, requests: [window1, window1] });
    expect((await postMetrics(collector.url, twice)).status).toBe(200);
    const rebatched = metricsRequest({ resource: { instance: 'i-1' }, requests: [window1, window2] });
    expect((await postMetrics(collector.url, rebatched, { format: 'json' })).status).toBe(200);
    expect(await requestsOf(collector.url, 'alpha')).toBe(10);
    await collector.close();
  });

  it('cumulative streams: resets by start time and by a lower value, out-of-order and late points, state kept across restarts', async () => {
    const dbPath = join(temp.dir, 'x.db');
    let collector = await startTestCollector(temp.dir, { dbPath });
    const t = now() - 30n * MINUTE_NS;
    const at = (minutes: number): bigint => t + BigInt(minutes * 60) * 1_000_000_000n;
    const send = async (total: number, start: bigint, time: bigint): Promise<void> => {
      expect((await postMetrics(collector.url, cumulativeExport('alpha', total, start, time))).status).toBe(200);
    };
    await send(5, at(0), at(1)); // +5
    await send(8, at(0), at(2)); // +3
    await send(6, at(0), at(1.5)); // older than the state: nothing
    await collector.close();

    collector = await startTestCollector(temp.dir, { dbPath });
    await send(8, at(0), at(2)); // a retry after the restart: nothing
    await send(11, at(0), at(3)); // +3, against the state that survived the restart
    await send(2, at(0), at(4)); // lower under the same start: a reset, +2
    await send(4, at(5), at(6)); // a new start time: a new incarnation, +4
    await send(13, at(0), at(5)); // late point of the old incarnation: +11 against its own baseline (2)
    expect(await requestsOf(collector.url, 'alpha')).toBe(5 + 3 + 3 + 2 + 4 + 11);
    await collector.close();
  });

  it('a point stamped a little ahead of the collector clock (another host) is accepted, and in the default range once its time has come', async () => {
    let clockMs = Date.now();
    const collector = await startTestCollector(temp.dir, { clock: () => clockMs });
    const ahead = BigInt(clockMs) * 1_000_000n + 90n * 1_000_000_000n;
    expect((await postMetrics(collector.url, deltaExport('skewed', 3, ahead - MINUTE_NS, ahead))).status).toBe(200);
    const rows = async (): Promise<[string, number][]> => {
      const response = await fetch(`${collector.url}/api/v1/matrix`);
      const view = (await response.json()) as { rows: { client: string; requests: number }[] };
      return view.rows.map((row) => [row.client, row.requests]);
    };
    // Ranges end at the collector's now: the point's minute has not begun yet.
    expect(await rows()).toEqual([]);
    clockMs += 3 * 60_000;
    expect(await rows()).toEqual([['skewed', 3]]);
    await collector.close();
  });

  it('zero increments store nothing, and retries of zeros are harmless', async () => {
    const collector = await startTestCollector(temp.dir);
    const t = now();
    const zero = deltaExport('idle', 0, t - MINUTE_NS, t);
    expect((await postMetrics(collector.url, zero)).status).toBe(200);
    expect((await postMetrics(collector.url, zero)).status).toBe(200);
    expect((await matrix(collector.url)).rows).toEqual([]);
    await collector.close();
    expect(tableCount(collector.dbPath, 'point_log')).toBe(0);
    expect(tableCount(collector.dbPath, 'series')).toBe(0);
  });

  it('an export answered 200 survives kill -9 right after; so does the cumulative state', async () => {
    const dbPath = join(temp.dir, 'crash.db');
    const t = now();
    let child = await spawnCollector(dbPath);
    const deltaResponse = await postMetrics(child.url, deltaExport('alpha', 17, t - MINUTE_NS, t));
    expect(deltaResponse.status).toBe(200);
    const cumulativeResponse = await postMetrics(child.url, cumulativeExport('beta', 5, t - 10n * MINUTE_NS, t - MINUTE_NS));
    expect(cumulativeResponse.status).toBe(200);
    child.child.kill('SIGKILL');
    expect((await child.exited).signal).toBe('SIGKILL');

    child = await spawnCollector(dbPath);
    try {
      // The same delta export retried after the crash is still recognised; the cumulative baseline survived.
      expect((await postMetrics(child.url, deltaExport('alpha', 17, t - MINUTE_NS, t))).status).toBe(200);
      expect((await postMetrics(child.url, cumulativeExport('beta', 8, t - 10n * MINUTE_NS, t))).status).toBe(200);
      const view = await matrix(child.url);
      expect(view.rows.find((row) => row.client === 'alpha')?.requests).toBe(17);
      expect(view.rows.find((row) => row.client === 'beta')?.requests).toBe(8);
    } finally {
      child.child.kill('SIGKILL');
      await child.exited;
    }
  });

  it('many concurrent exports from many instances are each counted exactly once', async () => {
    const collector = await startTestCollector(temp.dir);
    const t = now();
    const sends: Promise<Response>[] = [];
    for (let instance = 0; instance < 20; instance++) {
      for (let window = 0; window < 5; window++) {
        const end = t - BigInt(window) * MINUTE_NS;
        const request = deltaExport('alpha', instance + 1, end - MINUTE_NS, end, `i-${instance}`);
        sends.push(postMetrics(collector.url, request));
        if (window % 2 === 0) sends.push(postMetrics(collector.url, request, { format: 'json' }));
      }
    }
    const statuses = (await Promise.all(sends)).map((response) => response.status);
    expect(statuses.every((status) => status === 200)).toBe(true);
    // Σ over 20 instances of (instance + 1) × 5 windows.
    expect(await requestsOf(collector.url, 'alpha')).toBe(5 * ((20 * 21) / 2));
    await collector.close();
  });
});
