import zlib from 'node:zlib';

/** Where decoded bytes go, and whether it still wants them. */
export interface DecodedSink {
  push(chunk: Buffer): void;
  /** Nothing more is read: the rest need not be decoded. */
  readonly done: boolean;
}

/** Holds the body's source while the decoder catches up, and lets it go (a count of holders: see `Valve`). */
export interface Hold {
  hold(): void;
  release(): void;
}

export interface DecodedReader {
  write(chunk: Buffer): void;
  /** The body is complete (or its reading stops): `then` runs once all that will be decoded was handed over. */
  end(then: () => void): void;
}

function decoderFor(contentEncoding: string | undefined): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined {
  if (contentEncoding === undefined) return undefined;
  const coding = contentEncoding.trim().toLowerCase();
  if (coding === 'gzip' || coding === 'x-gzip') return zlib.createGunzip();
  if (coding === 'deflate') return zlib.createInflate();
  if (coding === 'br') return zlib.createBrotliDecompress();
  return undefined;
}

/**
 * Hands a body's bytes to `sink` decoded, when they are compressed (`gzip`, `deflate`, `br`): only what the proxy
 * reads is decoded, the bytes it forwards stay as they are. `undefined` when the body is not compressed: its bytes
 * are read as they come, with nothing in between. Decoding stops as soon as the sink is done (its message was too
 * large to keep), so a small compressed body that inflates to gigabytes costs what the sink keeps, not what it would
 * inflate to; while the decoder is behind, `source` is held (backpressure), so compressed input does not pile up in
 * front of it either.
 */
export function decodedReader(contentEncoding: string | undefined, sink: DecodedSink, source: Hold): DecodedReader | undefined {
  const decoder = decoderFor(contentEncoding);
  if (decoder === undefined) return undefined;
  let stopped = false;
  let holding = false;
  const finished: (() => void)[] = [];
  const letGo = (): void => {
    if (!holding) return;
    holding = false;
    source.release();
  };
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    letGo();
    decoder.destroy();
    for (const then of finished.splice(0)) then();
  };
  decoder.on('data', (chunk: Buffer) => {
    if (stopped) return;
    sink.push(chunk);
    if (sink.done) stop();
  });
  decoder.on('drain', letGo);
  decoder.once('end', stop);
  // A body that does not decode: what was read stays read, the rest is not looked at.
  decoder.once('error', stop);
  return {
    write: (chunk) => {
      if (stopped) return;
      if (sink.done) return stop();
      if (!decoder.write(chunk) && !holding) {
        holding = true;
        source.hold();
      }
    },
    end: (then) => {
      if (stopped) return then();
      finished.push(then);
      decoder.end();
    },
  };
}
