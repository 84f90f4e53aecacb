import { createGunzip } from 'node:zlib';
import { BusyError, PermanentError } from '../../model/errors.js';
import type { OtlpFormat } from '../../otlp/codec.js';

export const UNSUPPORTED_MEDIA_TYPE = 'Content-Type must be application/x-protobuf or application/json';

/** The OTLP encoding named by a Content-Type header, if it is one of the two. */
export function formatOf(contentType: string | undefined): OtlpFormat | undefined {
  const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase();
  if (mediaType === 'application/x-protobuf') return 'protobuf';
  if (mediaType === 'application/json') return 'json';
  return undefined;
}

/**
 * Bytes of decompressed output held at once across all requests. Each request's limit alone does not bound
 * memory: 32 concurrent gzip bombs of 32 KB each would otherwise inflate to 32 × the per-request limit.
 */
export class DecompressionBudget {
  private used = 0;

  constructor(readonly totalBytes: number) {}

  get inUse(): number {
    return this.used;
  }

  tryTake(bytes: number): boolean {
    if (this.used + bytes > this.totalBytes) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used -= bytes;
  }
}

/** Seconds a sender is asked to wait when the decompression budget is spent. */
const RETRY_AFTER_BUDGET = 1;

export interface DecodedBody {
  bytes: Buffer;
  /** Returns what the body took from the decompression budget; call once the decoded bytes are dropped. */
  release(): void;
}

/**
 * The body as bytes, gunzipped when `Content-Encoding: gzip`. Decompression stops at `maxBytes` of output (a 413),
 * so a small body that inflates to gigabytes costs at most that much memory; and what all requests inflate at
 * once is bounded by `budget` (a 503 with Retry-After past it: nothing is wrong with the body, there is no room now).
 */
export async function decodedBody(body: Buffer, contentEncoding: string | undefined, maxBytes: number, budget: DecompressionBudget): Promise<DecodedBody> {
  const encoding = contentEncoding?.trim().toLowerCase() ?? 'identity';
  if (encoding === '' || encoding === 'identity') return { bytes: body, release: () => undefined };
  if (encoding !== 'gzip' && encoding !== 'x-gzip') {
    throw new PermanentError(`Content-Encoding ${JSON.stringify(contentEncoding)} is not supported (gzip or none)`, 'unsupported_encoding', 415);
  }
  let taken = 0;
  const release = (): void => {
    budget.give(taken);
    taken = 0;
  };
  try {
    const bytes = await new Promise<Buffer>((resolve, reject) => {
      const gunzip = createGunzip();
      const chunks: Buffer[] = [];
      let length = 0;
      const stop = (error: Error): void => {
        gunzip.destroy();
        reject(error);
      };
      gunzip.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (length > maxBytes) return stop(new PermanentError(`the body decompresses to more than ${maxBytes} bytes`, 'decompressed_too_large', 413));
        if (!budget.tryTake(chunk.length)) {
          return stop(new BusyError('too much decompression in progress; retry later', 'decompression_busy', RETRY_AFTER_BUDGET));
        }
        taken += chunk.length;
        chunks.push(chunk);
      });
      gunzip.on('error', (error) => stop(new PermanentError(`the body is not valid gzip: ${error.message}`, 'bad_gzip')));
      gunzip.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, length)));
      gunzip.end(body);
    });
    return { bytes, release };
  } catch (error) {
    release();
    throw error;
  }
}
