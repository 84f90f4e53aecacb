/**
 * What the processors hand to the store: OTLP reduced to the extscope contract, validated, with every kept
 * string already length-checked. Nothing here refers to HTTP or to a storage backend.
 */
import type { ExtensionDims, RequestDims, ResourceKey } from '../../contract/index.js';
import type { RejectedPoints } from './rejections.js';

/** The resource attributes that identify an instance (`service.*`, `host.name`, the MCP server's serverInfo). */
export type InstanceIdentity = { [K in ResourceKey]: string | null };

/** Who sent the points: the resource attributes we keep, and a canonical form of all of them. */
export interface ResourceIdentity extends InstanceIdentity {
  /** Canonical text of every resource attribute. */
  canonical: string;
  /** A short stable hash of `canonical`: the resource part of each stream's identity. */
  key: string;
  /**
   * `instanceId` was not sent but derived from `host.name` and `process.pid` (processor/sender-identity.ts):
   * cumulative points then need their start time.
   */
  instanceDerived: boolean;
}

/** 0 = `extscope.requests`, 1 = `extscope.extension.requests` (stored as these numbers). */
export const SeriesKind = { Requests: 0, Extension: 1 } as const;
export type SeriesKind = (typeof SeriesKind)[keyof typeof SeriesKind];

/** OTLP's AggregationTemporality numbers. */
export const Temporality = { Delta: 1, Cumulative: 2 } as const;
export type Temporality = (typeof Temporality)[keyof typeof Temporality];

/**
 * The attributes of one `extscope.requests` / `extscope.extension.requests` stream, keyed as the contract's
 * tables say (absent = null; the extension attributes are null on request streams).
 */
export type SeriesDims = { kind: SeriesKind } & RequestDims & ExtensionDims;

/** One data point of a monotonic sum we count. */
export interface CounterPoint {
  /** Shared between points of the same attributes: never modified. */
  dims: Readonly<SeriesDims>;
  /**
   * The OTLP stream's identity in two parts, stable across restarts: resource, scope, metric and temporality
   * (one string shared by all points of the metric), and every point attribute by name (sorted names, typed
   * values), so that an attribute added to the contract leaves the identity of streams without it unchanged.
   */
  streamScope: string;
  streamAttributes: string;
  /**
   * The attribute part of the stream's key as schema 1 made it (processor/normalise-metrics/stream-key-v1.ts): a
   * store that still holds streams keyed that way finds them by it. Not the attributes as received: the point
   * outlives the decoded request (while the store applies it), and they would keep its objects reachable.
   */
  schema1Attributes: string;
  temporality: Temporality;
  startNs: bigint;
  timeNs: bigint;
  /** Whole, non-negative. For cumulative points this is the running total, not an increment. */
  value: number;
}

/** `extscope.server.extension.advertised`: this instance advertises `extensionId` with these settings. */
export interface AdvertisedPoint {
  serverName: string | null;
  serverVersion: string | null;
  extensionId: string;
  fingerprint: string | null;
  timeMs: number;
}

/** `extscope.server.extensions`: how many ids one server identity advertises (0 included). */
export interface AdvertisedCount {
  serverName: string | null;
  serverVersion: string | null;
  count: number;
  timeMs: number;
}

export interface ResourceBatch {
  resource: ResourceIdentity;
  counters: CounterPoint[];
  advertised: AdvertisedPoint[];
  advertisedCounts: AdvertisedCount[];
  /**
   * The export carried `extscope.process.ended` (the sender's last, sent as its process ended): the time of that
   * point on the sender's clock, ms. Absent: not its last.
   */
  endedMs?: number;
}

/** Why a data point was not used; not an error (see README). */
export type IgnoredReason = 'unknown_metric' | 'unsupported_type' | 'no_recorded_value' | 'not_stored' | 'not_advertised';

export interface MetricsBatch {
  resources: ResourceBatch[];
  ignored: Map<IgnoredReason, number>;
  /** Points refused individually (reported in `partial_success`), by reason and service. */
  rejections: RejectedPoints[];
  /** What the sender is told about them. */
  rejectedReason: string | undefined;
}

/** A SERVER span of an MCP request, reduced to what the drill-down shows. */
export interface SpanExample {
  service: string | null;
  instanceId: string | null;
  traceId: string;
  spanId: string;
  name: string;
  method: string | null;
  outcome: string | null;
  statusCode: string | null;
  clientName: string | null;
  clientVersion: string | null;
  clientDeclaration: string | null;
  startMs: number;
  durationMs: number;
  clientExtensions: string[];
  serverExtensions: string[];
  negotiated: string[];
  required: string[];
}

export interface SpanBatch {
  examples: SpanExample[];
  /** Spans that are not MCP server spans, or over the per-export budget. */
  ignored: number;
  rejected: number;
  rejectedReason: string | undefined;
}
