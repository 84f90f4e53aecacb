/**
 * Many calls at once on one gRPC channel (one HTTP/2 connection), as a busy OpenTelemetry Collector's exporter makes
 * them: each call is acknowledged, or refused with RESOURCE_EXHAUSTED and acknowledged when retried after the delay
 * the answer gives, as exporters do, within a few tries; every export is counted once. An earlier build took
 * admission when a call's metadata arrived and held it until its message was processed: 32 of 2,000 calls went
 * through per round, and 144 were acknowledged in 60 s.
 */
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { MINUTE_NS, encodeMetrics, metricsRequest, msToNs, requestPoint } from '../collector/helpers/otlp.js';
import { METRICS_EXPORT, rawClient, retryDelaySeconds } from '../collector/receiver/otlp-grpc/helpers.js';
import { requestsOfService } from '../support/matrix.js';

const CALLS = 2000;
/** Tries per export, as an exporter retries a retryable refusal. */
const TRIES = 4;
let temp: Awaited<ReturnType<typeof tempDir>>;
let collector: TestCollector;

beforeAll(async () => {
  temp = await tempDir();
  collector = await startTestCollector(temp.dir, { grpcPort: 0 });
});
afterAll(async () => {
  await collector?.close();
  await temp?.cleanup();
});

describe('one gRPC channel, many calls at once', () => {
  it(
    `${CALLS} concurrent exports on one channel: each acknowledged within ${TRIES} tries (a refusal retried after its delay), every one counted once`,
    { timeout: 120_000 },
    async () => {
      const client = rawClient(collector.grpcAddress!, METRICS_EXPORT);
      const timeNs = msToNs(Date.now() - 60_000);
      /** The answer each try got, by try. */
      const answers: Map<number, number>[] = Array.from({ length: TRIES }, () => new Map());
      let acknowledged = 0;
      try {
        await Promise.all(
          Array.from({ length: CALLS }, async (_, index) => {
            // One instance per export: a delta of 1 each, so that the matrix says how many were stored.
            const body = encodeMetrics(
              metricsRequest({
                resource: { service: 'one-channel', instance: `call-${index}` },
                requests: [requestPoint({ client: 'busy-collector', count: 1, startNs: timeNs - MINUTE_NS, timeNs })],
              }),
            );
            for (let attempt = 0; attempt < TRIES; attempt++) {
              const { code, metadata } = await client.call(body);
              answers[attempt]!.set(code, (answers[attempt]!.get(code) ?? 0) + 1);
              if (code === status.OK) {
                acknowledged++;
                return;
              }
              if (code !== status.RESOURCE_EXHAUSTED) return;
              await new Promise((resolve) => setTimeout(resolve, (retryDelaySeconds(metadata) ?? 1) * 1000));
            }
          }),
        );
      } finally {
        client.close();
      }
      const summary = answers
        .map((byCode, attempt) => `try ${attempt + 1}: ${[...byCode].map(([code, count]) => `${status[code]} ${count}`).join(', ') || '-'}`)
        .join('; ');
      process.stdout.write(`[faults] ${CALLS} concurrent exports on one gRPC channel: ${summary}\n`);
      expect(acknowledged, summary).toBe(CALLS);
      expect(await requestsOfService(collector.url, 'one-channel')).toBe(acknowledged);
    },
  );
});
