import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { PermanentError } from '../../model/errors.js';
import type { OtlpFormat } from '../../otlp/codec.js';

const gunzipAsync = promisify(gunzip);

export const UNSUPPORTED_MEDIA_TYPE = 'Content-Type must be application/x-protobuf or application/json';

/** The OTLP encoding named by a Content-Type header, if it is one of the two. */
export function formatOf(contentType: string | undefined): OtlpFormat | undefined {
  const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase();
  if (mediaType === 'application/x-protobuf') return 'protobuf';
  if (mediaType === 'application/json') return 'json';
  return undefined;
}

/**
 * The body as bytes, gunzipped when `Content-Encoding: gzip`. Decompression stops at `maxBytes` of output,
 * so a small body that inflates to gigabytes costs at most that much memory, and is a 413.
 */
export async function decodedBody(body: Buffer, contentEncoding: string | undefined, maxBytes: number): Promise<Buffer> {
  const encoding = contentEncoding?.trim().toLowerCase() ?? 'identity';
  if (encoding === '' || encoding === 'identity') return body;
  if (encoding !== 'gzip' && encoding !== 'x-gzip') {
    throw new PermanentError(`Content-Encoding ${JSON.stringify(contentEncoding)} is not supported (gzip or none)`, 'unsupported_encoding', 415);
  }
  try {
    return await gunzipAsync(body, { maxOutputLength: maxBytes });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') throw new PermanentError(`the body decompresses to more than ${maxBytes} bytes`, 'decompressed_too_large', 413);
    throw new PermanentError(`the body is not valid gzip: ${(error as Error).message}`, 'bad_gzip');
  }
}
