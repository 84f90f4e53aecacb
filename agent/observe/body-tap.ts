/** More than this of a body is not kept: such a request goes unattributed rather than held in memory. */
export const MAX_TAPPED_BYTES = 16 * 1024 * 1024;

/** What a default reader's `read()` resolves to. */
interface ReadResult {
  done: boolean;
  value?: unknown;
}

/**
 * The body of a `Request` an HTTP entry reads, kept as the entry reads it, so that a request the entry then
 * answers by itself can still be attributed, without copying every request's body (a `clone()` per POST: a tee of
 * its stream, two new streams and a new request).
 *
 * The SDKs' entries read a POST through `request.body.getReader()`: `createMcpHandler` after cloning the request
 * (the copy it forwards to its 2025-era fallback), which gives the request a new stream, a branch of the tee; the
 * streamable HTTP transports without cloning. So {@link follow} is called before a transport runs and after each
 * clone of the request, and taps the reader the request's current stream hands out next: its `read()` passes
 * every chunk on unchanged and keeps a reference to it. What the entry left unread (a 415 before any read, a 413
 * on `Content-Length`, a body read only part way) is read by {@link text} after the answer.
 */
export class BodyTap {
  private readonly chunks: Uint8Array[] = [];
  private bytes = 0;
  private stream: ReadableStream<Uint8Array> | undefined;
  private ended = false;
  private lost = false;

  constructor(private readonly request: Request) {}

  /** Taps the stream the request holds now (before a transport runs, and after each clone). Never throws into the entry. */
  follow(): void {
    try {
      const stream = this.request.body;
      if (stream === null || stream === undefined || stream === this.stream) return;
      if (this.bytes > 0 || this.ended) {
        this.lost = true;
        return;
      }
      this.stream = stream;
      if (Object.hasOwn(stream, 'getReader') || !Object.isExtensible(stream)) {
        this.lost = true;
        return;
      }
      const getReader = stream.getReader;
      const take = <R extends ReadResult>(result: R): R => this.take(result);
      const markLost = () => {
        this.lost = true;
      };
      Object.defineProperty(stream, 'getReader', {
        configurable: true,
        writable: true,
        value: function getReaderTapped(this: ReadableStream<Uint8Array>) {
          delete (stream as { getReader?: unknown }).getReader;
          const reader = (getReader as (...args: unknown[]) => ReadableStreamDefaultReader<Uint8Array>).apply(this, arguments as unknown as unknown[]);
          try {
            const read = reader.read;
            if ((arguments[0] as { mode?: unknown } | undefined)?.mode === 'byob') markLost();
            else {
              reader.read = function readTapped(this: ReadableStreamDefaultReader<Uint8Array>) {
                return read.apply(this, arguments as unknown as []).then(take);
              };
            }
          } catch {
            markLost();
          }
          return reader;
        },
      });
    } catch {
      this.lost = true;
    }
  }

  /**
   * The whole body as text (decoded as the SDK decodes it), reading what the entry left unread; `undefined` when
   * it cannot be had (read some other way, over {@link MAX_TAPPED_BYTES}, or failing to read).
   */
  async text(): Promise<string | undefined> {
    if (!this.ended && !this.lost) await this.readRest();
    if (this.lost || !this.ended) return undefined;
    return new TextDecoder().decode(this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks));
  }

  private take<R extends ReadResult>(result: R): R {
    if (result.done) this.ended = true;
    else if (!this.lost) this.keep(result.value);
    return result;
  }

  private keep(chunk: unknown): void {
    if (!(chunk instanceof Uint8Array)) {
      this.lost = true;
      return;
    }
    this.bytes += chunk.byteLength;
    if (this.bytes > MAX_TAPPED_BYTES) {
      this.lost = true;
      this.chunks.length = 0;
    } else this.chunks.push(chunk);
  }

  private async readRest(): Promise<void> {
    let stream = this.stream;
    if (stream === undefined) {
      // Never followed (the request had no stream then): read it unless the entry read it some way no tap sees.
      if (this.request.bodyUsed) return;
      const body = this.request.body;
      if (body === null) {
        this.ended = true;
        return;
      }
      stream = body;
    }
    if (stream.locked) return;
    const reader = ReadableStream.prototype.getReader.call(stream) as ReadableStreamDefaultReader<Uint8Array>;
    try {
      while (!this.lost) {
        const { done, value } = await reader.read();
        if (done) {
          this.ended = true;
          return;
        }
        this.keep(value);
      }
      await reader.cancel();
    } catch {
      this.lost = true;
    } finally {
      reader.releaseLock();
    }
  }
}
