import { BodyKind } from './http-head.js';

/** Where a body's payload goes (its bytes without the chunked framing), as views of the bytes that passed. */
export type PayloadSink = (payload: Buffer) => void;

const enum Chunk {
  Size,
  Extension,
  SizeLf,
  Data,
  DataCr,
  DataLf,
  TrailerStart,
  TrailerLine,
  TrailerLf,
  EndLf,
}

/** A chunk size line or trailers longer than this end the exchange (Node's parser bounds them too). */
const MAX_FRAMING_BYTES = 16 * 1024;

/** A body's framing could not be read: the connection ends (its bytes could be read two ways). */
export class FramingError extends Error {}

/**
 * Finds where one message's body ends in the bytes as they come, without copying them: a length counted down, a
 * chunked body's framing read byte by byte only where it is (size lines, the CRLF after each chunk, trailers), each
 * chunk's data handed on as a view. One per direction of a connection, reset for each message.
 */
export class BodyFraming {
  private kind = BodyKind.None;
  private remaining = 0;
  private chunk = Chunk.Size;
  private size = 0;
  private digits = 0;
  private framingBytes = 0;

  /** Starts a message's body (`length` for {@link BodyKind.Length}). */
  start(kind: BodyKind, length: number): void {
    this.kind = kind;
    this.remaining = length;
    this.chunk = Chunk.Size;
    this.size = 0;
    this.digits = 0;
    this.framingBytes = 0;
  }

  /** Whether the body is over (or there was none). */
  get done(): boolean {
    return this.kind === BodyKind.None;
  }

  /**
   * Reads `bytes` from `from`: hands the payload to `sink` (when given), returns where the body ended in `bytes`
   * (the next message starts there), or `bytes.length` when it goes on past them.
   */
  read(bytes: Buffer, from: number, sink: PayloadSink | undefined): number {
    switch (this.kind) {
      case BodyKind.None:
        return from;
      case BodyKind.UntilClose:
        if (sink !== undefined && from < bytes.length) sink(from === 0 ? bytes : bytes.subarray(from));
        return bytes.length;
      case BodyKind.Length: {
        const end = Math.min(bytes.length, from + this.remaining);
        if (sink !== undefined && end > from) sink(from === 0 && end === bytes.length ? bytes : bytes.subarray(from, end));
        this.remaining -= end - from;
        if (this.remaining === 0) this.kind = BodyKind.None;
        return end;
      }
      case BodyKind.Chunked:
        return this.chunked(bytes, from, sink);
    }
  }

  /** The connection closed: whether that ends the body whole (only a body delimited by the close does). */
  closed(): boolean {
    if (this.kind !== BodyKind.UntilClose) return this.kind === BodyKind.None;
    this.kind = BodyKind.None;
    return true;
  }

  private chunked(bytes: Buffer, from: number, sink: PayloadSink | undefined): number {
    let pos = from;
    const end = bytes.length;
    while (pos < end) {
      if (this.chunk === Chunk.Data) {
        const stop = Math.min(end, pos + this.remaining);
        if (sink !== undefined) sink(bytes.subarray(pos, stop));
        this.remaining -= stop - pos;
        pos = stop;
        if (this.remaining === 0) this.chunk = Chunk.DataCr;
        continue;
      }
      const byte = bytes[pos++]!;
      if (++this.framingBytes > MAX_FRAMING_BYTES) throw new FramingError('chunked framing too long');
      switch (this.chunk) {
        case Chunk.Size: {
          const digit = hex(byte);
          if (digit >= 0) {
            this.digits++;
            this.size = this.size * 16 + digit;
            if (this.size > Number.MAX_SAFE_INTEGER / 16) throw new FramingError('chunk size too large');
          } else if (this.digits === 0) throw new FramingError('malformed chunk size');
          else if (byte === 0x3b || byte === 0x20 || byte === 0x09) this.chunk = Chunk.Extension;
          else if (byte === 0x0d) this.chunk = Chunk.SizeLf;
          else throw new FramingError('malformed chunk size');
          break;
        }
        case Chunk.Extension:
          if (byte === 0x0d) this.chunk = Chunk.SizeLf;
          else if (byte === 0x0a) throw new FramingError('bare LF in chunk extension');
          break;
        case Chunk.SizeLf:
          if (byte !== 0x0a) throw new FramingError('malformed chunk size line');
          this.digits = 0;
          if (this.size === 0) this.chunk = Chunk.TrailerStart;
          else {
            this.remaining = this.size;
            this.size = 0;
            this.framingBytes = 0;
            this.chunk = Chunk.Data;
          }
          break;
        case Chunk.DataCr:
          if (byte !== 0x0d) throw new FramingError('chunk data longer than its size');
          this.chunk = Chunk.DataLf;
          break;
        case Chunk.DataLf:
          if (byte !== 0x0a) throw new FramingError('chunk data longer than its size');
          this.chunk = Chunk.Size;
          break;
        case Chunk.TrailerStart:
          this.chunk = byte === 0x0d ? Chunk.EndLf : Chunk.TrailerLine;
          if (byte === 0x0a) throw new FramingError('bare LF in trailers');
          break;
        case Chunk.TrailerLine:
          if (byte === 0x0d) this.chunk = Chunk.TrailerLf;
          else if (byte === 0x0a) throw new FramingError('bare LF in trailers');
          break;
        case Chunk.TrailerLf:
          if (byte !== 0x0a) throw new FramingError('bare CR in trailers');
          this.chunk = Chunk.TrailerStart;
          break;
        case Chunk.EndLf:
          if (byte !== 0x0a) throw new FramingError('malformed last chunk');
          this.kind = BodyKind.None;
          return pos;
      }
    }
    return pos;
  }
}

function hex(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  return -1;
}
