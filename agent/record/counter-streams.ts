import type { Attributes, ObservableResult } from '@opentelemetry/api';

const OVERFLOW_KEY = '\u0000overflow';

interface Entry {
  attributes: Attributes;
  value: number;
}

/**
 * In-process cumulative counts keyed by strings, reported through an observable instrument.
 *
 * Why not `Counter.add`: the SDK hashes the attribute object on every call, which on the hot path of every MCP
 * request costs more than the rest of the agent together. Here a request costs a few Map lookups; callers build
 * attribute objects only when {@link Tally.increment} finds no stream yet. Keys are two-level (`outer`, `inner`) so a caller that reuses one
 * `outer` string (whose hash V8 caches) only hashes the short `inner` part. Reported as a monotonic sum, the
 * exporter's temporality (delta by default) applies exactly as it would to a Counter. Counts made before an
 * SDK is attached are kept and reported at its first collection.
 */
export class Tally {
  private readonly entries = new Map<string, Map<string, Entry>>();
  private streams = 0;

  /** Past `maxStreams` distinct keys, new keys are counted in one overflow stream, as the OTel SDK does. */
  constructor(private readonly maxStreams = Number.POSITIVE_INFINITY) {}

  /** Adds to an existing stream; `false` when there is none yet (then call {@link create}). */
  increment(outer: string, inner: string, amount = 1): boolean {
    const entry = this.entries.get(outer)?.get(inner);
    if (entry === undefined) return false;
    entry.value += amount;
    return true;
  }

  create(outer: string, inner: string, attributes: Attributes, amount = 1): void {
    if (this.streams >= this.maxStreams && outer !== OVERFLOW_KEY) {
      this.add(OVERFLOW_KEY, '', { 'otel.metric.overflow': true }, amount);
      return;
    }
    let level = this.entries.get(outer);
    if (level === undefined) {
      level = new Map();
      this.entries.set(outer, level);
    }
    level.set(inner, { attributes, value: amount });
    this.streams++;
  }

  /** For rare counts, where building `attributes` every time does not matter. */
  add(outer: string, inner: string, attributes: Attributes, amount = 1): void {
    if (!this.increment(outer, inner, amount)) this.create(outer, inner, attributes, amount);
  }

  observe(result: ObservableResult): void {
    for (const level of this.entries.values()) {
      for (const { attributes, value } of level.values()) result.observe(value, attributes);
    }
  }

  get size(): number {
    return this.streams;
  }

  total(): number {
    let sum = 0;
    for (const level of this.entries.values()) for (const { value } of level.values()) sum += value;
    return sum;
  }
}
