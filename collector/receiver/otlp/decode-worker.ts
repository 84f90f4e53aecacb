import { parentPort } from 'node:worker_threads';
import { METRICS } from '../../../contract/index.js';
import { PermanentError } from '../../model/errors.js';
import { type OtlpFormat, type Signal, decodeMetricsRequest, decodeTraceRequest } from '../../otlp/codec.js';
import type { ExportMetricsServiceRequest } from '../../otlp/messages.js';
import { toParts } from './decoded-parts.js';

/** One decode off the collector's main thread (see decode-pool.ts). */
export interface DecodeTask {
  id: number;
  signal: Signal;
  format: OtlpFormat;
  bytes: Uint8Array;
}

export type DecodeAnswer = { id: number; ok: true; parts: Uint8Array[] } | { id: number; ok: false; message: string; reason: string; status: number };

/** The metrics whose points the pipeline reads; of every other metric it only counts the points (as ignored). */
const READ_METRICS = new Set<string>([
  METRICS.requests.name,
  METRICS.extensionRequests.name,
  METRICS.advertised.name,
  METRICS.advertisedCount.name,
  METRICS.processEnded.name,
]);
const POINT_LISTS = ['sum', 'gauge', 'histogram', 'exponentialHistogram', 'summary'] as const;

/**
 * Copying the decoded request back to the main thread costs more than decoding it (a structured clone of a
 * 7.5 MB export's 90,000 points takes ~2 s there). The points of metrics outside the contract are never read,
 * only counted, so they travel as empty arrays of the same length (a sparse array clones in constant time).
 */
function withoutUnreadPoints(request: ExportMetricsServiceRequest): ExportMetricsServiceRequest {
  for (const resourceMetrics of request.resourceMetrics ?? []) {
    for (const scopeMetrics of resourceMetrics?.scopeMetrics ?? []) {
      for (const metric of scopeMetrics?.metrics ?? []) {
        if (metric === null || metric === undefined || READ_METRICS.has(metric.name ?? '')) continue;
        const lists = metric as unknown as Record<(typeof POINT_LISTS)[number], { dataPoints?: unknown[] | null } | null | undefined>;
        for (const key of POINT_LISTS) {
          const points = lists[key]?.dataPoints;
          if (Array.isArray(points)) lists[key] = { dataPoints: new Array<unknown>(points.length) };
        }
      }
    }
  }
  return request;
}

parentPort?.on('message', (task: DecodeTask) => {
  const bytes = Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength);
  let answer: DecodeAnswer;
  let moved: ArrayBuffer[] = [];
  try {
    const request = task.signal === 'metrics' ? withoutUnreadPoints(decodeMetricsRequest(bytes, task.format)) : decodeTraceRequest(bytes, task.format);
    const parts = toParts(request);
    answer = { id: task.id, ok: true, parts };
    moved = parts.filter((part) => part.byteOffset === 0 && part.byteLength === part.buffer.byteLength).map((part) => part.buffer as ArrayBuffer);
  } catch (error) {
    const permanent = error instanceof PermanentError;
    answer = {
      id: task.id,
      ok: false,
      message: (error as Error).message,
      reason: permanent ? error.reason : 'malformed',
      status: permanent ? error.status : 400,
    };
  }
  parentPort?.postMessage(answer, moved);
});
