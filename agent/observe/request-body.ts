/** More of a body than this is not kept: such a request goes unattributed rather than held in memory. */
export const MAX_KEPT_BYTES = 16 * 1024 * 1024;

/**
 * The text of an HTTP request's body, had after its exchange, for a request the entry answered by itself (no
 * server instance saw it, so nothing else recorded it). Never a copy of every request's body: a `clone()` per
 * POST (a tee of its stream, two new streams, a new request) cost the agent more than all else it did per request.
 */
export interface RequestBody {
  /** The whole body as text (decoded as the SDKs decode it), or `undefined` when it cannot be had. */
  text(): Promise<string | undefined>;
}

/**
 * `createMcpHandler` clones each POST before reading it (the copy it hands its 2025-era fallback) and reads the
 * original. So the copy it made is the one to read when it answered by itself: it is unread then (the modern
 * path's refusals, a 413 on `Content-Length`); a 413 found while reading left it holding what was read and the
 * rest in its source; and a 415 comes before any clone, with the request unread. Costs one reference a request.
 */
export class EntryCopy implements RequestBody {
  private copy: Request | undefined;

  constructor(private readonly request: Request) {}

  /** The entry cloned the request: the first clone is the one it forwards. */
  cloned(copy: object): void {
    this.copy ??= copy as Request;
  }

  text(): Promise<string | undefined> {
    const source = this.copy ?? this.request;
    return source.bodyUsed ? Promise.resolve(undefined) : readText(source.body);
  }
}

/** What a default reader's `read()` resolves to. */
interface ReadResult {
  done: boolean;
  value?: unknown;
}

/** Chunks of one body, up to {@link MAX_KEPT_BYTES}. */
class Kept {
  readonly chunks: Uint8Array[] = [];
  private bytes = 0;
  ended = false;
  lost = false;

  take<R extends ReadResult>(result: R): R {
    if (result.done) this.ended = true;
    else if (!this.lost) this.keep(result.value);
    return result;
  }

  keep(chunk: unknown): void {
    if (!(chunk instanceof Uint8Array)) {
      this.lost = true;
      return;
    }
    this.bytes += chunk.byteLength;
    if (this.bytes > MAX_KEPT_BYTES) {
      this.lost = true;
      this.chunks.length = 0;
    } else this.chunks.push(chunk);
  }

  text(): string | undefined {
    if (this.lost || !this.ended) return undefined;
    return new TextDecoder().decode(this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks));
  }
}

/** Reads what is left of `stream` into `kept` (its own reader, not one an application replaced). */
async function readRest(stream: ReadableStream<Uint8Array> | null, kept: Kept): Promise<void> {
  if (stream === null) {
    kept.ended = true;
    return;
  }
  if (stream.locked) return;
  const reader = ReadableStream.prototype.getReader.call(stream) as ReadableStreamDefaultReader<Uint8Array>;
  try {
    while (!kept.lost) {
      const { done, value } = await reader.read();
      if (done) {
        kept.ended = true;
        return;
      }
      kept.keep(value);
    }
    await reader.cancel();
  } catch {
    kept.lost = true;
  } finally {
    reader.releaseLock();
  }
}

/** The text of an unread body, up to {@link MAX_KEPT_BYTES}. */
async function readText(stream: ReadableStream<Uint8Array> | null): Promise<string | undefined> {
  const kept = new Kept();
  await readRest(stream, kept);
  return kept.text();
}

/**
 * A streamable HTTP transport's `handleRequest` reads the request it is given through
 * `request.body.getReader()`, without cloning it. The tap, set before the transport runs, wraps the reader that
 * stream hands out next: its `read()` passes every chunk on unchanged and keeps a reference to it. What the
 * transport left unread (a 406/415 before any read, a 413 on `Content-Length`, a body read only part way) is read
 * after the answer.
 */
export class BodyTap implements RequestBody {
  private readonly kept = new Kept();
  private readonly stream: ReadableStream<Uint8Array> | null;

  /** Never throws into the entry: a stream that cannot be tapped leaves the body lost. */
  constructor(request: Request) {
    let stream: ReadableStream<Uint8Array> | null = null;
    try {
      stream = request.body;
      if (stream !== null) this.tap(stream);
    } catch {
      this.kept.lost = true;
    }
    this.stream = stream;
  }

  async text(): Promise<string | undefined> {
    if (!this.kept.ended && !this.kept.lost) await readRest(this.stream, this.kept);
    return this.kept.text();
  }

  private tap(stream: ReadableStream<Uint8Array>): void {
    if (Object.hasOwn(stream, 'getReader') || !Object.isExtensible(stream)) {
      this.kept.lost = true;
      return;
    }
    const kept = this.kept;
    const getReader = stream.getReader;
    const take = <R extends ReadResult>(result: R): R => kept.take(result);
    Object.defineProperty(stream, 'getReader', {
      configurable: true,
      writable: true,
      value: function getReaderTapped(this: ReadableStream<Uint8Array>) {
        delete (stream as { getReader?: unknown }).getReader;
        const reader = (getReader as (...args: unknown[]) => ReadableStreamDefaultReader<Uint8Array>).apply(this, arguments as unknown as unknown[]);
        try {
          const read = reader.read;
          if ((arguments[0] as { mode?: unknown } | undefined)?.mode === 'byob') kept.lost = true;
          else {
            reader.read = function readTapped(this: ReadableStreamDefaultReader<Uint8Array>) {
              return read.apply(this, arguments as unknown as []).then(take);
            };
          }
        } catch {
          kept.lost = true;
        }
        return reader;
      },
    });
  }
}
