import { status } from '@grpc/grpc-js';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MetricsOutcome } from '../../../collector/model/consumer.js';
import { Admission } from '../../../collector/receiver/otlp/admission.js';
import { DecompressionBudget } from '../../../collector/receiver/otlp/body.js';
import { DecodePool } from '../../../collector/receiver/otlp/decode-pool.js';
import { RECEIVE_STALL_MS, ReceiveBudget } from '../../../collector/receiver/otlp/receive-budget.js';
import type { ExportPipeline } from '../../../collector/receiver/otlp/pipeline.js';
import { otlpReceiver } from '../../../collector/receiver/otlp/plugin.js';
import type { ExportResult } from '../../../collector/receiver/otlp/telemetry.js';
import { OtlpGrpcReceiver } from '../../../collector/receiver/otlp-grpc/receiver.js';
import { StoreUnavailableError } from '../../../collector/store/store.js';
import { MINUTE_NS, encodeMetrics, metricsRequest, msToNs, requestPoint } from '../helpers/otlp.js';
import { METRICS_EXPORT, rawClient } from './otlp-grpc/helpers.js';

interface Finished {
  protocol: string;
  signal: string;
  result: ExportResult;
  reason: string | undefined;
}

const PARTIAL: MetricsOutcome = {
  applied: 1,
  duplicates: 0,
  ignored: new Map(),
  rejections: [{ reason: 'too_old', service: 'svc', points: 2 }],
  rejectedReason: 'two points were too old',
  counts: [],
};

/**
 * Both transports around one pipeline whose consumer fails as a store that cannot write does (or refuses some
 * points), and whose telemetry keeps every export it is told about: what the receivers count, call by call.
 */
describe('each consumed export is counted once, on OTLP/HTTP and OTLP/gRPC', () => {
  let mode: 'unavailable' | 'partial';
  let finished: Finished[];
  let decoder: DecodePool;
  let app: FastifyInstance;
  let grpc: OtlpGrpcReceiver;
  let httpUrl: string;

  beforeEach(async () => {
    mode = 'unavailable';
    finished = [];
    decoder = new DecodePool(1);
    const admission = new Admission(4);
    const decompression = new DecompressionBudget(1024 * 1024);
    const receiving = new ReceiveBudget(1024 * 1024, RECEIVE_STALL_MS);
    const consumer = async (): Promise<MetricsOutcome> => {
      if (mode === 'unavailable') throw new StoreUnavailableError('disk full');
      return PARTIAL;
    };
    const pipeline: ExportPipeline = {
      metrics: { consumeMetrics: consumer },
      traces: { consumeTraces: async () => ({ stored: 0, ignored: 0, rejected: 0, rejectedReason: undefined }) },
      decoder,
      telemetry: {
        exportFinished: (protocol, signal, result, _seconds, reason) => finished.push({ protocol, signal, result, reason }),
        metricsConsumed: () => undefined,
        tracesConsumed: () => undefined,
      },
    };
    app = Fastify();
    await app.register(otlpReceiver, {
      prefix: '/v1',
      ...pipeline,
      admission,
      limits: { maxBodyBytes: 1024 * 1024, maxDecompressedBytes: 1024 * 1024 },
      ingestToken: undefined,
      decompression,
      receiving,
      authFailures: undefined,
    });
    httpUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    grpc = new OtlpGrpcReceiver({
      host: '127.0.0.1',
      port: 0,
      pipeline,
      gate: { ingestToken: undefined, authFailures: undefined, admission },
      limits: { maxMessageBytes: 1024 * 1024, receiveTimeoutMs: 10_000 },
      decompression,
      receiving,
      log: { warn: () => undefined, error: () => undefined },
      shutdownGraceMs: 1000,
    });
    await grpc.start();
  });

  afterEach(async () => {
    await grpc.shutdown();
    await app.close();
    await decoder.close();
  });

  const body = (): Buffer => {
    const t = msToNs(Date.now());
    return encodeMetrics(
      metricsRequest({ resource: { instance: 'i-1' }, requests: [requestPoint({ client: 'alpha', count: 1, startNs: t - MINUTE_NS, timeNs: t })] }),
    );
  };
  const postHttp = (): Promise<Response> =>
    fetch(`${httpUrl}/v1/metrics`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body: body() });
  const callGrpc = async () => {
    const client = rawClient(`127.0.0.1:${grpc.port}`, METRICS_EXPORT);
    try {
      return await client.call(body());
    } finally {
      client.close();
    }
  };

  it('a store that cannot write: 503 / UNAVAILABLE, counted once as throttled (store_unavailable) per protocol', async () => {
    expect((await postHttp()).status).toBe(503);
    expect((await callGrpc()).code).toBe(status.UNAVAILABLE);
    expect(finished).toEqual([
      { protocol: 'http', signal: 'metrics', result: 'throttled', reason: 'store_unavailable' },
      { protocol: 'grpc', signal: 'metrics', result: 'throttled', reason: 'store_unavailable' },
    ]);
  });

  it('points refused one by one: 200 / OK with partial_success, counted once as partial per protocol', async () => {
    mode = 'partial';
    expect((await postHttp()).status).toBe(200);
    expect((await callGrpc()).code).toBe(status.OK);
    expect(finished).toEqual([
      { protocol: 'http', signal: 'metrics', result: 'partial', reason: undefined },
      { protocol: 'grpc', signal: 'metrics', result: 'partial', reason: undefined },
    ]);
  });

  it('a refusal before the consume (unsupported media type) is counted once too, by the transport', async () => {
    const response = await fetch(`${httpUrl}/v1/metrics`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(response.status).toBe(415);
    expect(finished).toEqual([{ protocol: 'http', signal: 'metrics', result: 'rejected', reason: 'unsupported_media_type' }]);
  });
});
