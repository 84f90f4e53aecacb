import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { PermanentError, type PermanentStatus } from '../../model/errors.js';
import { type OtlpFormat, type Signal, decodeMetricsRequest, decodeTraceRequest } from '../../otlp/codec.js';
import type { ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../../otlp/messages.js';
import { fromParts } from './decoded-parts.js';
import type { DecodeAnswer, DecodeTask } from './decode-worker.js';

/** Bodies below this are decoded in place: a round trip to a worker costs more than they do. */
const INLINE_DECODE_BYTES = 64 * 1024;
/** Heap a decoder may use; a body that needs more is refused (413) and its worker replaced. */
const WORKER_HEAP_MB = 512;

function workerUrl(): URL {
  const beside = new URL('./decode-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  // Loaded from the TypeScript sources (not the build): use the compiled worker of `npm run build`.
  return new URL('../../../dist/collector/receiver/otlp/decode-worker.js', import.meta.url);
}

interface Pending {
  task: DecodeTask;
  resolve(request: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  job: Pending | undefined;
}

/**
 * Decodes large OTLP bodies (protobuf or JSON, with the JSON checks) on worker threads, so that a multi-megabyte
 * export does not stall every other request while it is parsed. Jobs wait in order for a free worker; how many
 * can wait is bounded by the receiver's admission. The decoded request comes back as plain data, in parts put
 * together between turns of the event loop (decoded-parts.ts): the same fields the generated classes carry,
 * 64-bit integers as `{ low, high }`.
 */
export class DecodePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;
  private readonly url = workerUrl();

  constructor(private readonly size = Math.max(1, Math.min(4, availableParallelism() - 1))) {}

  async decodeMetrics(bytes: Buffer, format: OtlpFormat): Promise<ExportMetricsServiceRequest> {
    if (bytes.length < INLINE_DECODE_BYTES) return decodeMetricsRequest(bytes, format);
    return (await this.run('metrics', format, bytes)) as ExportMetricsServiceRequest;
  }

  async decodeTraces(bytes: Buffer, format: OtlpFormat): Promise<ExportTraceServiceRequest> {
    if (bytes.length < INLINE_DECODE_BYTES) return decodeTraceRequest(bytes, format);
    return (await this.run('traces', format, bytes)) as ExportTraceServiceRequest;
  }

  /** Stops the workers; what is still queued is answered as a decode failure. */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) pending.reject(new Error('the collector is shutting down'));
    await Promise.all(this.slots.splice(0).map((slot) => slot.worker.terminate()));
  }

  private run(signal: Signal, format: OtlpFormat, bytes: Buffer): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('the collector is shutting down'));
    // A copy the worker owns (the body may be a slice of a shared pool), moved rather than cloned.
    const copy = new Uint8Array(bytes);
    return new Promise((resolve, reject) => {
      this.queue.push({ task: { id: this.nextId++, signal, format, bytes: copy }, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.slots.find((candidate) => candidate.job === undefined) ?? (this.slots.length < this.size ? this.spawn() : undefined);
      if (slot === undefined) return;
      const job = this.queue.shift() as Pending;
      slot.job = job;
      slot.worker.postMessage(job.task, [job.task.bytes.buffer as ArrayBuffer]);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(this.url, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    const slot: Slot = { worker, job: undefined };
    worker.unref();
    worker.on('message', (answer: DecodeAnswer) => {
      const job = slot.job;
      slot.job = undefined;
      if (job !== undefined && job.task.id === answer.id) {
        if (answer.ok) fromParts(answer.parts).then(job.resolve, job.reject);
        else job.reject(new PermanentError(answer.message, answer.reason, answer.status as PermanentStatus));
      }
      this.dispatch();
    });
    const lost = (): void => {
      const index = this.slots.indexOf(slot);
      if (index < 0) return;
      this.slots.splice(index, 1);
      slot.job?.reject(new PermanentError('the body needs more memory to decode than the collector allows', 'decode_too_large', 413));
      slot.job = undefined;
      if (!this.closed) this.dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    this.slots.push(slot);
    return slot;
  }
}
