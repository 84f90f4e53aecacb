import type { Attributes, ObservableResult } from '@opentelemetry/api';
import { ATTR_OTEL_METRIC_OVERFLOW } from '../semconv.js';

const OVERFLOW_KEY = '\u0000overflow';
const OVERFLOW_ATTRIBUTES: Attributes = Object.freeze({ [ATTR_OTEL_METRIC_OVERFLOW]: true });

/** One stream's count: a caller that keeps it may add to `value` directly. */
export interface Stream {
  readonly attributes: Attributes;
  value: number;
}

/**
 * The streams of one counter: in-process cumulative counts keyed by strings, reported through an observable
 * instrument ({@link observe}).
 *
 * Why not `Counter.add`: the SDK hashes the attribute object on every call, which on the hot path of every MCP
 * request costs more than the rest of the agent together. Here a request costs a few Map lookups; callers build
 * attribute objects only when {@link get} finds no stream yet. Keys are two-level (`outer`, `inner`) so a
 * caller that reuses one `outer` string (whose hash V8 caches) only hashes the short `inner` part.
 *
 * Reported as a monotonic sum, the exporter's temporality applies as it would to a Counter. With cumulative
 * temporality an export carries every count made so far, so one that fails loses nothing: the next one carries
 * it. Counts made before an SDK is attached are kept and reported at its first collection.
 */
export class CounterStreams {
  private readonly streams = new Map<string, Map<string, Stream>>();
  private count = 0;

  /** Past `maxStreams` distinct keys, new keys are counted in one overflow stream, as the OTel SDK does. */
  constructor(private readonly maxStreams = Number.POSITIVE_INFINITY) {}

  /** The stream under the keys, if there is one. */
  get(outer: string, inner: string): Stream | undefined {
    return this.streams.get(outer)?.get(inner);
  }

  /** A new stream holding `amount`; past `maxStreams`, the overflow stream, `amount` added to it. */
  create(outer: string, inner: string, attributes: Attributes, amount = 1): Stream {
    if (this.count >= this.maxStreams && outer !== OVERFLOW_KEY) return this.add(OVERFLOW_KEY, '', OVERFLOW_ATTRIBUTES, amount);
    let level = this.streams.get(outer);
    if (level === undefined) {
      level = new Map();
      this.streams.set(outer, level);
    }
    const stream = { attributes, value: amount };
    level.set(inner, stream);
    this.count++;
    return stream;
  }

  /** Adds to the stream, created with `attributes` when new. For rare counts, where building them every time does not matter. */
  add(outer: string, inner: string, attributes: Attributes, amount = 1): Stream {
    const stream = this.get(outer, inner);
    if (stream === undefined) return this.create(outer, inner, attributes, amount);
    stream.value += amount;
    return stream;
  }

  observe(result: ObservableResult): void {
    for (const level of this.streams.values()) {
      for (const { attributes, value } of level.values()) result.observe(value, attributes);
    }
  }
}
