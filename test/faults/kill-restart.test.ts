import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildCollector, matrix, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { DELTA, MINUTE_NS, type Json, encodeMetrics, metricsRequest, msToNs, requestPoint } from '../collector/helpers/otlp.js';
import { pick, rssOf } from './full.js';

/**
 * `kill -9` of the collector CLI during sustained ingest, again and again, restarting on the same database.
 * Senders behave like OTLP exporters: an export without a 200 is retried (also across the restart), and some
 * acknowledged exports are sent again (a retry whose 200 was lost). Every export must be counted exactly once.
 */

const CYCLES = pick(6, 20);
const INGEST_MS = pick(400, 1500);
const SENDERS = 4;

interface Export {
  body: Buffer;
  count: number;
  acked: boolean;
}

describe('kill -9 during sustained ingest', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let child: ChildCollector | undefined;

  beforeAll(async () => {
    temp = await tempDir();
  });
  afterAll(async () => {
    child?.child.kill('SIGKILL');
    if (child !== undefined) await child.exited;
    await temp.cleanup();
  });

  it(`${CYCLES} crashes and restarts on one database: every export answered 200 counted exactly once, retries and duplicates included`, async () => {
    const dbPath = join(temp.dir, 'crash.db');
    const t = msToNs(Date.now());
    const exports: Export[] = [];
    let sequence = 0;
    const make = (): Export => {
      sequence++;
      const count = (sequence % 7) + 1;
      const request: Json = metricsRequest({
        resource: { service: 'crash', instance: `i-${sequence}` },
        temporality: DELTA,
        requests: [requestPoint({ client: 'alpha', count, startNs: t - MINUTE_NS, timeNs: t })],
      });
      const entry = { body: encodeMetrics(request), count, acked: false };
      exports.push(entry);
      return entry;
    };
    const send = async (url: string, entry: Export): Promise<boolean> => {
      try {
        const response = await fetch(`${url}/v1/metrics`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: entry.body });
        await response.arrayBuffer();
        if (response.status === 200) entry.acked = true;
        else if (response.status !== 503) unexpected.push(response.status);
        return response.status === 200;
      } catch {
        return false; // the collector died mid-request: unknown whether it was stored; retried later
      }
    };

    const unexpected: number[] = [];
    let duplicates = 0;
    let peakRss = 0;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      child = await spawnCollector(dbPath);
      const url = child.url;
      // First the exports of earlier cycles without a 200, and a few acknowledged ones again.
      for (const entry of exports.filter((candidate) => !candidate.acked)) await send(url, entry);
      for (const entry of exports.filter((candidate, index) => candidate.acked && index % 13 === cycle % 13).slice(0, 20)) {
        await send(url, entry);
        duplicates++;
      }
      const until = Date.now() + INGEST_MS;
      await Promise.all(
        Array.from({ length: SENDERS }, async () => {
          while (Date.now() < until) await send(url, make());
        }),
      );
      // Kill while the senders are still writing: a burst of new exports in flight.
      const inFlight = Array.from({ length: SENDERS * 2 }, () => send(url, make()));
      await new Promise((resolve) => setTimeout(resolve, 5));
      peakRss = Math.max(peakRss, (await rssOf(child.child.pid as number)).peak);
      child.child.kill('SIGKILL');
      expect((await child.exited).signal).toBe('SIGKILL');
      await Promise.all(inFlight);
      child = undefined;
    }

    // Recovery: everything not yet acknowledged is retried until it is.
    child = await spawnCollector(dbPath);
    for (let round = 0; round < 5 && exports.some((entry) => !entry.acked); round++) {
      for (const entry of exports.filter((candidate) => !candidate.acked)) await send(child.url, entry);
    }
    expect(exports.every((entry) => entry.acked)).toBe(true);
    const expected = exports.reduce((sum, entry) => sum + entry.count, 0);
    const view = await matrix(child.url, '&service=crash');
    const stored = view.rows.reduce((sum, row) => sum + row.requests, 0);
    console.log(
      `[faults] kill -9 × ${CYCLES} (${INGEST_MS} ms of ingest each, ${SENDERS} senders): ${exports.length} exports, ${duplicates} re-sent acknowledged, requests expected ${expected}, stored ${stored}; collector peak RSS ${peakRss.toFixed(0)} MB`,
    );
    expect(stored).toBe(expected);
    expect(unexpected).toEqual([]);
  });
});
