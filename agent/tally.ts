import type { Attributes, ObservableResult } from '@opentelemetry/api';

const OVERFLOW_KEY = '\u0000overflow';

/**
 * In-process cumulative counts keyed by a cheap string key, reported through an observable instrument.
 *
 * Why not `Counter.add`: the SDK hashes the attribute object on every call, which on the hot path of every MCP
 * request costs more than the rest of the agent together. Keying by joined attribute values is one string
 * concat and one Map lookup; attribute objects are built once per distinct key. Reported as a monotonic sum,
 * the exporter's temporality (delta by default) applies exactly as it would to a Counter. Counts made before
 * an SDK is attached are kept and reported at its first collection.
 */
export class Tally {
  private readonly entries = new Map<string, { attributes: Attributes; value: number }>();

  /** Past `maxStreams` distinct keys, new keys are counted in one overflow stream, as the OTel SDK does. */
  constructor(private readonly maxStreams = Number.POSITIVE_INFINITY) {}

  add(key: string, attributes: () => Attributes, amount = 1): void {
    const entry = this.entries.get(key);
    if (entry !== undefined) entry.value += amount;
    else if (this.entries.size < this.maxStreams || key === OVERFLOW_KEY) this.entries.set(key, { attributes: attributes(), value: amount });
    else this.add(OVERFLOW_KEY, () => ({ 'otel.metric.overflow': true }), amount);
  }

  observe(result: ObservableResult): void {
    for (const { attributes, value } of this.entries.values()) result.observe(value, attributes);
  }

  /** Current total for one key (tests and the startup self-check read this). */
  get(key: string): number {
    return this.entries.get(key)?.value ?? 0;
  }

  get size(): number {
    return this.entries.size;
  }

  total(): number {
    let sum = 0;
    for (const { value } of this.entries.values()) sum += value;
    return sum;
  }
}
