import { StringDecoder } from 'node:string_decoder';
import { type KeptBytes, UNBUDGETED } from './byte-budget.js';

/**
 * Largest JSON-RPC message read off the wire. A longer one (a large resource, a hostile peer) is skipped, not
 * buffered without bound; its request then stays unanswered as far as the agent can tell.
 */
export const MAX_FRAME_CHARS = 16 * 1024 * 1024;

/** Reads JSON values out of a byte stream, frame by frame; never throws on bad input. */
interface FrameReader {
  /** A chunk as written to or read from the stream (a string in the writer's encoding, or bytes). */
  push(chunk: unknown, encoding?: unknown): void;
}

/** A chunk of a Node stream as text: bytes are decoded as UTF-8 across chunk boundaries. */
function decode(decoder: StringDecoder, chunk: unknown, encoding: unknown): string | undefined {
  if (typeof chunk === 'string') {
    if (typeof encoding === 'string' && encoding !== 'utf8' && encoding !== 'utf-8' && Buffer.isEncoding(encoding))
      return Buffer.from(chunk, encoding).toString('utf8');
    return chunk;
  }
  if (chunk instanceof Uint8Array) return decoder.write(chunk);
  return undefined;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Newline-delimited JSON, the MCP stdio framing: one message per line. Lines that are not JSON (a log line on
 * stdout) are ignored.
 */
export class LineFrames implements FrameReader {
  private readonly decoder = new StringDecoder('utf8');
  private partial = '';
  private skipping = false;

  constructor(private readonly onMessage: (message: unknown) => void) {}

  push(chunk: unknown, encoding?: unknown): void {
    const text = decode(this.decoder, chunk, encoding);
    if (text === undefined || text.length === 0) return;
    let start = 0;
    for (let newline = text.indexOf('\n'); newline >= 0; newline = text.indexOf('\n', start)) {
      const line = this.partial.length === 0 ? text.slice(start, newline) : this.partial + text.slice(start, newline);
      this.partial = '';
      start = newline + 1;
      if (this.skipping) {
        this.skipping = false;
        continue;
      }
      this.line(line);
    }
    if (start < text.length && !this.skipping) {
      this.partial += text.slice(start);
      if (this.partial.length > MAX_FRAME_CHARS) {
        this.partial = '';
        this.skipping = true;
      }
    }
  }

  private line(line: string): void {
    const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line;
    const first = trimmed.charCodeAt(0);
    // `{` or `[`: anything else is not a JSON-RPC message.
    if (first !== 0x7b && first !== 0x5b) return;
    const message = parse(trimmed);
    if (message !== undefined) this.onMessage(message);
  }
}

/**
 * An HTTP answer body: `application/json` (one message or a batch) or `text/event-stream` (one message per
 * event's `data`). Which one is told by the first character, so no header needs reading: a JSON body starts
 * with `{` or `[`, an event stream with a field name, a comment or a blank line.
 */
export class AnswerFrames implements FrameReader {
  private readonly decoder = new StringDecoder('utf8');
  private kind: 'json' | 'sse' | undefined;
  private buffer = '';
  private overflowed = false;

  /** `kept` accounts for what is held until a message is complete (by default only {@link MAX_FRAME_CHARS} bounds it). */
  constructor(
    private readonly onMessage: (message: unknown) => void,
    private readonly kept: KeptBytes = UNBUDGETED,
  ) {}

  /** A message was too large to keep: the rest of the body is not read. */
  get skipped(): boolean {
    return this.overflowed;
  }

  push(chunk: unknown, encoding?: unknown): void {
    if (this.overflowed) return;
    const text = decode(this.decoder, chunk, encoding);
    if (text === undefined || text.length === 0) return;
    this.buffer += text;
    if (this.buffer.length > MAX_FRAME_CHARS || !this.kept.resize(this.buffer.length)) {
      this.overflow();
      return;
    }
    if (this.kind === undefined) {
      const first = this.buffer.trimStart().charCodeAt(0);
      if (Number.isNaN(first)) return;
      this.kind = first === 0x7b || first === 0x5b ? 'json' : 'sse';
    }
    if (this.kind === 'sse') {
      this.events();
      this.kept.resize(this.buffer.length);
    }
  }

  /** The body is complete (or its reading stops: what is kept is given back). */
  end(): void {
    if (this.overflowed) return;
    this.buffer += this.decoder.end();
    if (this.kind === 'json') {
      const message = parse(this.buffer);
      if (message !== undefined) this.onMessage(message);
    } else if (this.kind === 'sse') {
      this.buffer += '\n\n';
      this.events();
    }
    this.buffer = '';
    this.kept.release();
  }

  private overflow(): void {
    this.overflowed = true;
    this.buffer = '';
    this.kept.release();
  }

  private events(): void {
    for (;;) {
      const match = /\r?\n\r?\n/.exec(this.buffer);
      if (match === null) return;
      const event = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const data: string[] = [];
      for (const line of event.split(/\r?\n/)) {
        if (line.startsWith('data:')) data.push(line.slice(line.charCodeAt(5) === 0x20 ? 6 : 5));
      }
      if (data.length === 0) continue;
      const message = parse(data.join('\n'));
      if (message !== undefined) this.onMessage(message);
    }
  }
}

/**
 * A request body: one JSON value, read when complete (bounded by {@link MAX_FRAME_CHARS} and by `kept`). Kept as the
 * bytes that came (no copy, nothing decoded) until then: a body that turns out too large cost no text, and one
 * that fits is decoded once.
 */
export class BodyFrames implements FrameReader {
  private chunks: Buffer[] = [];
  private bytes = 0;
  private overflowed = false;

  constructor(private readonly kept: KeptBytes = UNBUDGETED) {}

  /** The body was too large to keep: it is not read (the rest need not be decoded). */
  get skipped(): boolean {
    return this.overflowed;
  }

  push(chunk: unknown, encoding?: unknown): void {
    if (this.overflowed) return;
    const bytes = asBytes(chunk, encoding);
    if (bytes === undefined || bytes.length === 0) return;
    this.bytes += bytes.length;
    if (this.bytes > MAX_FRAME_CHARS || !this.kept.resize(this.bytes)) {
      this.overflowed = true;
      this.release();
      return;
    }
    this.chunks.push(bytes);
  }

  /**
   * The body as JSON, or `undefined` when it was not JSON or too large. What was kept stays counted until
   * {@link release}: the parsed value is as large, and it lives until the exchange hands it over.
   */
  end(): unknown {
    if (this.overflowed) return undefined;
    const text = this.chunks.length === 1 ? this.chunks[0]!.toString('utf8') : Buffer.concat(this.chunks, this.bytes).toString('utf8');
    this.chunks = [];
    return parse(text);
  }

  /** Nothing of the body is kept any more. */
  release(): void {
    this.chunks = [];
    this.bytes = 0;
    this.kept.release();
  }
}

/** A chunk of a Node stream as bytes (a string in the writer's encoding is encoded so). */
function asBytes(chunk: unknown, encoding: unknown): Buffer | undefined {
  if (typeof chunk === 'string') return Buffer.from(chunk, typeof encoding === 'string' && Buffer.isEncoding(encoding) ? encoding : 'utf8');
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return undefined;
}
