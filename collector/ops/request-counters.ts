import { Counter, type Registry } from 'prom-client';
import { OVERFLOW_VALUE } from '../../contract/index.js';
import { requestState } from '../analysis/request-state.js';
import { SeriesKind } from '../model/batches.js';
import type { AppliedCount } from '../model/records.js';

/**
 * Label sets one counter may hold. Every sender-chosen label is already bounded where it is stored (service names
 * and client names and versions by the per-dimension limit, extension ids by the per-instance-hour limit): this
 * cap only keeps the product of those bounds from growing a scrape without end. A label set past it is counted
 * with its sender-chosen labels as `_OTHER` (the closed ones, state and declarations, stay).
 */
export const MAX_COUNTER_SERIES = 10_000;

/**
 * Time one turn of the event loop spends turning applied counts into counter updates: a large export's are spread
 * over turns, and under steady ingest the counting keeps up (a fixed 200 a turn fell behind at a few hundred
 * exports a second, holding a growing backlog of counts until the load eased).
 */
const TURN_BUDGET_MS = 4;
/** Counts taken between two looks at the clock. */
const COUNTS_PER_LOOK = 200;

type RequestLabels = 'service' | 'client' | 'client_version' | 'client_declaration' | 'server_declaration';
type ExtensionLabels = 'service' | 'client' | 'client_version' | 'extension' | 'state';
type MissingLabels = 'service' | 'client' | 'client_version' | 'extension';

/** A stored value as a label: absent (the client sent no name, no version) is the empty label, i.e. no label. */
const label = (value: string | null): string => value ?? '';

/**
 * The requests this collector applied, as Prometheus counters: exactly the increments the store reports as new
 * (a retried export adds nothing), labelled as stored. Each collector process counts what it applied since it
 * started, so replicas on one database sum to what all of them applied.
 */
export class RequestCounters {
  private readonly requests: Counter<RequestLabels>;
  private readonly extensions: Counter<ExtensionLabels>;
  private readonly missing: Counter<MissingLabels>;
  /** Label sets in use per counter, to enforce {@link MAX_COUNTER_SERIES}. */
  private readonly seen = new Map<Counter<string>, Set<string>>();
  /** Applied counts not turned into counter updates yet (the lists as handed over; the first from `next` on), and how many have been queued and counted so far. */
  private readonly queue: (readonly AppliedCount[])[] = [];
  private next = 0;
  private queued = 0;
  private counted = 0;
  private waiters: { until: number; resolve: () => void }[] = [];
  private draining = false;

  constructor(registry: Registry) {
    const registers = [registry];
    this.requests = new Counter({
      name: 'extscope_requests_total',
      help: 'MCP requests applied by this collector, by service, client name and version, and the declarations of client and answering server (unknown, none, declared)',
      labelNames: ['service', 'client', 'client_version', 'client_declaration', 'server_declaration'],
      registers,
    });
    this.extensions = new Counter({
      name: 'extscope_extension_requests_total',
      help: 'MCP requests applied by this collector per extension id the client declared or the server advertised: state negotiated, client_only, server_only, neither, or unknown (no server instance known yet)',
      labelNames: ['service', 'client', 'client_version', 'extension', 'state'],
      registers,
    });
    this.missing = new Counter({
      name: 'extscope_missing_capability_errors_total',
      help: 'MCP requests applied by this collector that were answered -32021 (missing required client capability), per extension id the answer named',
      labelNames: ['service', 'client', 'client_version', 'extension'],
      registers,
    });
    for (const counter of [this.requests, this.extensions, this.missing]) this.seen.set(counter as Counter<string>, new Set());
  }

  /**
   * Takes what one apply added. Counter updates cost prom-client a label hash each, so an export of tens of
   * thousands of series is counted over several turns of the event loop rather than in the ingest's turn;
   * {@link settled} waits for them (a scrape then sees every count applied before it).
   */
  applied(counts: readonly AppliedCount[]): void {
    if (counts.length === 0) return;
    this.queue.push(counts);
    this.queued += counts.length;
    if (!this.draining) {
      this.draining = true;
      setImmediate(() => this.drain());
    }
  }

  /** Resolves once every count handed over so far is on the counters. */
  settled(): Promise<void> {
    if (this.counted >= this.queued) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ until: this.queued, resolve }));
  }

  private drain(): void {
    const sums = new TurnSums();
    const started = performance.now();
    do {
      for (let taken = 0; taken < COUNTS_PER_LOOK && this.queue.length > 0; taken++) {
        const list = this.queue[0] as readonly AppliedCount[];
        sums.take(list[this.next++] as AppliedCount);
        this.counted++;
        if (this.next === list.length) {
          this.queue.shift();
          this.next = 0;
        }
      }
    } while (this.queue.length > 0 && performance.now() - started < TURN_BUDGET_MS);
    this.add(this.requests, sums.requests, ['client_declaration', 'server_declaration']);
    this.add(this.extensions, sums.extensions, ['state']);
    this.add(this.missing, sums.missing, []);
    this.waiters = this.waiters.filter((waiter) => (this.counted >= waiter.until ? (waiter.resolve(), false) : true));
    if (this.queue.length > 0) setImmediate(() => this.drain());
    else this.draining = false;
  }

  private add<L extends string>(counter: Counter<L>, sums: Sums<L>, closed: readonly NoInfer<L>[]): void {
    const seen = this.seen.get(counter as Counter<string>) as Set<string>;
    // Label sets past the cap, summed per overflow label set (one per combination of closed values, so few, and
    // not held against the cap).
    const overflow = new Sums<L>();
    for (const [key, { labels, count }] of sums.entries()) {
      if (seen.has(key) || seen.size < MAX_COUNTER_SERIES) {
        seen.add(key);
        counter.inc(labels, count);
        continue;
      }
      const names = Object.keys(labels) as L[];
      const values = names.map((name) => (closed.includes(name) ? labels[name] : OVERFLOW_VALUE));
      overflow.add(values, () => Object.fromEntries(names.map((name, index) => [name, values[index]])) as Record<L, string>, count);
    }
    for (const [, { labels, count }] of overflow.entries()) counter.inc(labels, count);
  }
}

/**
 * The counts of one turn summed per label set of each counter: exports' series (per instance, method, outcome, …)
 * share few label sets, and each counter update costs prom-client a label hash.
 */
class TurnSums {
  readonly requests = new Sums<RequestLabels>();
  readonly extensions = new Sums<ExtensionLabels>();
  readonly missing = new Sums<MissingLabels>();

  take({ service, dims, count }: AppliedCount): void {
    if (count <= 0) return;
    const [s, c, v] = [label(service), label(dims.clientName), label(dims.clientVersion)];
    if (dims.kind === SeriesKind.Requests) {
      const [cd, sd] = [label(dims.clientDeclaration), label(dims.serverDeclaration)];
      this.requests.add([s, c, v, cd, sd], () => ({ service: s, client: c, client_version: v, client_declaration: cd, server_declaration: sd }), count);
      return;
    }
    const [e, state] = [label(dims.extensionId), requestState(dims)];
    this.extensions.add([s, c, v, e, state], () => ({ service: s, client: c, client_version: v, extension: e, state }), count);
    if (dims.required === true) this.missing.add([s, c, v, e], () => ({ service: s, client: c, client_version: v, extension: e }), count);
  }
}

/** Counts summed per label set, keyed by the label values in a fixed order. */
class Sums<L extends string> {
  private readonly sums = new Map<string, { labels: Record<L, string>; count: number }>();

  add(values: readonly string[], labels: () => Record<L, string>, count: number): void {
    const key = values.join('\u0000');
    const entry = this.sums.get(key);
    if (entry === undefined) this.sums.set(key, { labels: labels(), count });
    else entry.count += count;
  }

  entries(): IterableIterator<[string, { labels: Record<L, string>; count: number }]> {
    return this.sums.entries();
  }
}
