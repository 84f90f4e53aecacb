import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type MatrixJson, type TestCollector, getJson, startTestCollector, tableCount, tempDir } from './helpers/collector.js';
import { CUMULATIVE, type Json, metricsRequest, msToNs, postMetrics, requestPoint } from './helpers/otlp.js';

/**
 * What cumulative temporality brings, with the collector's clock moved by the test: a stream alive for days
 * (longer than the dedup window), a sender restarting (a new start time), points late, out of order or
 * repeated, many long-lived streams; and the conversion state this leaves, as /metrics reports it.
 */
const T0 = Date.UTC(2026, 3, 6, 8, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function cumulative(points: { client?: string; total: number; startMs: number; timeMs: number }[], instance = 'i-1'): Json {
  return metricsRequest({
    resource: { service: 'svc', instance },
    temporality: CUMULATIVE,
    requests: points.map((point) =>
      requestPoint({ client: point.client ?? 'alpha', count: point.total, startNs: msToNs(point.startMs), timeNs: msToNs(point.timeMs) }),
    ),
  });
}

describe('cumulative streams over days, restarts and disorder', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let now: number;
  let collector: TestCollector;
  const start = async (): Promise<TestCollector> =>
    (collector = await startTestCollector(temp.dir, { dbPath: join(temp.dir, 'cumulative.db'), clock: () => now }));

  beforeEach(async () => {
    temp = await tempDir();
    now = T0;
    await start();
  });
  afterEach(async () => {
    await collector.close();
    await temp.cleanup();
  });

  const send = async (request: Json): Promise<{ rejected: number }> => {
    const response = await postMetrics(collector.url, request, { format: 'json' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { partialSuccess?: { rejectedDataPoints?: string } };
    return { rejected: Number(body.partialSuccess?.rejectedDataPoints ?? 0) };
  };
  const requests = async (client = 'alpha'): Promise<number> => {
    const { body } = await getJson<MatrixJson>(`${collector.url}/api/v1/matrix?from=${T0 - DAY}&to=${now + HOUR}`);
    return body.rows.find((row) => row.client === client)?.requests ?? 0;
  };
  const gauge = async (): Promise<number> => {
    const text = await (await fetch(`${collector.url}/metrics`)).text();
    return Number(/^extscope_collector_cumulative_streams (\d+)$/m.exec(text)?.[1]);
  };

  it('a stream reporting for days, past the dedup window and retention passes, is converted against its kept total', async () => {
    const startMs = T0 - HOUR;
    await send(cumulative([{ total: 5, startMs, timeMs: T0 }]));
    for (const [day, total] of [
      [1, 9],
      [2, 20],
      [3, 26],
    ] as const) {
      now = T0 + day * DAY;
      await collector.store.lifecycle.maintain();
      await send(cumulative([{ total, startMs, timeMs: now }]));
    }
    expect(await requests()).toBe(26);
    // The first point again, three days on: too old to tell from a retry, refused rather than counted.
    expect(await send(cumulative([{ total: 5, startMs, timeMs: T0 }]))).toEqual({ rejected: 1 });
    // The newest again: a duplicate.
    expect(await send(cumulative([{ total: 26, startMs, timeMs: now }]))).toEqual({ rejected: 0 });
    expect(await requests()).toBe(26);
    expect(await gauge()).toBe(1);
    // The dedup keys went with the window; the conversion state did not.
    await collector.close();
    expect(tableCount(collector.dbPath, 'point_log')).toBe(1);
    expect(tableCount(collector.dbPath, 'cumulative_state')).toBe(1);
  });

  it('a sender restart (a new start time) counts from zero; the old incarnation keeps its own baseline until it is superseded', async () => {
    const first = T0 - HOUR;
    await send(cumulative([{ total: 10, startMs: first, timeMs: T0 }]));
    now = T0 + 10 * MINUTE;
    const second = now - MINUTE;
    await send(cumulative([{ total: 3, startMs: second, timeMs: now }]));
    // The first process's last export, arriving after the second one's.
    await send(cumulative([{ total: 12, startMs: first, timeMs: T0 + 5 * MINUTE }]));
    expect(await requests()).toBe(10 + 3 + 2);
    expect(await gauge()).toBe(2);

    // Once the restart is older than the dedup window, the old baseline can no longer be needed.
    now = T0 + 7 * HOUR;
    await send(cumulative([{ total: 8, startMs: second, timeMs: now }]));
    await collector.store.lifecycle.maintain();
    expect(await gauge()).toBe(1);
    expect(await requests()).toBe(10 + 3 + 2 + 5);
  });

  it('points out of order or twice, in one export or several, add only what the newest total says', async () => {
    const startMs = T0 - HOUR;
    const points = [
      { total: 9, startMs, timeMs: T0 - 10 * MINUTE },
      { total: 4, startMs, timeMs: T0 - 30 * MINUTE },
      { total: 9, startMs, timeMs: T0 - 10 * MINUTE },
      { total: 7, startMs, timeMs: T0 - 20 * MINUTE },
    ];
    await send(cumulative(points));
    await send(cumulative(points.slice().reverse()));
    expect(await requests()).toBe(9);
    await send(
      cumulative([
        { total: 15, startMs, timeMs: T0 },
        { total: 11, startMs, timeMs: T0 - 5 * MINUTE },
      ]),
    );
    expect(await requests()).toBe(15);
    const text = await (await fetch(`${collector.url}/metrics`)).text();
    expect(text).toMatch(/extscope_collector_points_total\{result="applied"\} 2\n/);
    expect(text).toMatch(/extscope_collector_points_total\{result="duplicate"\} 8\n/);
  });

  it('many long-lived streams across collector restarts: exact totals, one state row per stream, reported on /metrics', async () => {
    const STREAMS = 2000;
    const startMs = T0 - HOUR;
    const round = (total: (index: number) => number, timeMs: number, instance: number): Json =>
      cumulative(
        Array.from({ length: STREAMS / 4 }, (_, index) => ({ client: `client-${instance}-${index}`, total: total(index), startMs, timeMs })),
        `i-${instance}`,
      );
    let expected = 0;
    for (let hour = 0; hour < 4; hour++) {
      now = T0 + hour * 3 * HOUR;
      if (hour === 2) {
        await collector.close();
        await start();
      }
      for (let instance = 0; instance < 4; instance++) await send(round((index) => (index % 7) + hour * 3, now, instance));
    }
    for (let index = 0; index < STREAMS / 4; index++) expected += 4 * ((index % 7) + 9);
    const { body } = await getJson<MatrixJson>(`${collector.url}/api/v1/matrix?from=${T0 - DAY}&to=${now + HOUR}&limit=5000&extensionLimit=20`);
    expect(body.rows).toHaveLength(STREAMS);
    expect(body.rows.reduce((sum, row) => sum + row.requests, 0)).toBe(expected);
    expect(await gauge()).toBe(STREAMS);
    await collector.close();
    expect(tableCount(collector.dbPath, 'cumulative_state')).toBe(STREAMS);
  });
});
