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

  applied(counts: readonly AppliedCount[]): void {
    for (const { service, dims, count } of counts) {
      if (count <= 0) continue;
      const client = { service: label(service), client: label(dims.clientName), client_version: label(dims.clientVersion) };
      if (dims.kind === SeriesKind.Requests) {
        this.add(this.requests, { ...client, client_declaration: label(dims.clientDeclaration), server_declaration: label(dims.serverDeclaration) }, ['client_declaration', 'server_declaration'], count);
        continue;
      }
      const extension = label(dims.extensionId);
      this.add(this.extensions, { ...client, extension, state: requestState(dims) }, ['state'], count);
      if (dims.required === true) this.add(this.missing, { ...client, extension }, [], count);
    }
  }

  private add<L extends string>(counter: Counter<L>, labels: Record<L, string>, closed: readonly NoInfer<L>[], count: number): void {
    const seen = this.seen.get(counter as Counter<string>) as Set<string>;
    const key = JSON.stringify(labels);
    if (!seen.has(key)) {
      if (seen.size < MAX_COUNTER_SERIES) seen.add(key);
      else {
        const overflow = Object.fromEntries(Object.keys(labels).map((name) => [name, closed.includes(name as L) ? labels[name as L] : OVERFLOW_VALUE])) as Record<L, string>;
        // The overflow label sets themselves are few (one per combination of closed values), so they are always kept.
        seen.add(JSON.stringify(overflow));
        labels = overflow;
      }
    }
    counter.inc(labels, count);
  }
}
