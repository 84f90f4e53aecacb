/**
 * The shapes of decoded OTLP messages, as far as extscope reads them. The generated protobufjs code ships no
 * message types, so these describe its objects: absent fields are `null` (the generated defaults), 64-bit
 * integers are `Long` objects (or plain numbers when `long` is unavailable).
 */

export interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
}

export type Int64 = LongLike | number | string | null | undefined;

export interface AnyValue {
  stringValue?: string | null;
  boolValue?: boolean | null;
  intValue?: Int64;
  doubleValue?: number | null;
  arrayValue?: { values?: AnyValue[] | null } | null;
  kvlistValue?: { values?: KeyValue[] | null } | null;
  bytesValue?: Uint8Array | null;
}

export interface KeyValue {
  key?: string | null;
  value?: AnyValue | null;
}

interface Resource {
  attributes?: KeyValue[] | null;
}

interface InstrumentationScope {
  name?: string | null;
  version?: string | null;
}

export interface NumberDataPoint {
  attributes?: KeyValue[] | null;
  startTimeUnixNano?: Int64;
  timeUnixNano?: Int64;
  asDouble?: number | null;
  asInt?: Int64;
  flags?: number | null;
}

export interface Metric {
  name?: string | null;
  gauge?: { dataPoints?: NumberDataPoint[] | null } | null;
  sum?: { dataPoints?: NumberDataPoint[] | null; aggregationTemporality?: number | null; isMonotonic?: boolean | null } | null;
  histogram?: { dataPoints?: unknown[] | null } | null;
  exponentialHistogram?: { dataPoints?: unknown[] | null } | null;
  summary?: { dataPoints?: unknown[] | null } | null;
}

interface ScopeMetrics {
  scope?: InstrumentationScope | null;
  metrics?: Metric[] | null;
}

interface ResourceMetrics {
  resource?: Resource | null;
  scopeMetrics?: ScopeMetrics[] | null;
}

export interface ExportMetricsServiceRequest {
  resourceMetrics?: ResourceMetrics[] | null;
}

export interface Span {
  traceId?: Uint8Array | null;
  spanId?: Uint8Array | null;
  name?: string | null;
  kind?: number | null;
  startTimeUnixNano?: Int64;
  endTimeUnixNano?: Int64;
  attributes?: KeyValue[] | null;
}

interface ScopeSpans {
  scope?: InstrumentationScope | null;
  spans?: Span[] | null;
}

interface ResourceSpans {
  resource?: Resource | null;
  scopeSpans?: ScopeSpans[] | null;
}

export interface ExportTraceServiceRequest {
  resourceSpans?: ResourceSpans[] | null;
}

/** OTLP's data point flag bit: the point carries no value (a gap, e.g. after a staleness marker). */
export const FLAG_NO_RECORDED_VALUE = 1;
/** SpanKind SERVER. */
export const SPAN_KIND_SERVER = 2;
