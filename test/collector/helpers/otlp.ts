import { gzipSync } from 'node:zlib';
import {
  ATTR_CLIENT_DECLARATION,
  ATTR_CLIENT_NAME,
  ATTR_CLIENT_VERSION,
  ATTR_ERA,
  ATTR_EXTENSION_CLIENT_DECLARED,
  ATTR_EXTENSION_FINGERPRINT,
  ATTR_EXTENSION_ID,
  ATTR_EXTENSION_NEGOTIATED,
  ATTR_EXTENSION_REQUIRED,
  ATTR_EXTENSION_SERVER_DECLARED,
  ATTR_HOST_NAME,
  ATTR_MCP_METHOD_NAME,
  ATTR_OUTCOME,
  ATTR_SERVER_DECLARATION,
  ATTR_SERVER_NAME,
  ATTR_SERVER_TRANSPORT,
  ATTR_SERVER_VERSION,
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  METRIC_EXTENSION_REQUESTS,
  METRIC_PROCESS_ENDED,
  METRIC_REQUESTS,
  METRIC_SERVER_EXTENSIONS,
  METRIC_SERVER_EXTENSION_ADVERTISED,
} from '../../../contract/index.js';
import { MetricsRequest, TraceRequest } from '../../../collector/otlp/proto-root.js';

/**
 * Builders for OTLP export requests in the extscope contract, as plain OTLP/JSON-shaped objects (64-bit
 * integers as decimal strings, enums as numbers), encodable both ways with the official definitions.
 */

export type Json = Record<string, unknown>;
export const DELTA = 1;
export const CUMULATIVE = 2;

export const MINUTE_NS = 60_000_000_000n;
export const msToNs = (ms: number): bigint => BigInt(ms) * 1_000_000n;

export function attribute(key: string, value: string | boolean | number): Json {
  if (typeof value === 'boolean') return { key, value: { boolValue: value } };
  if (typeof value === 'number') return { key, value: { intValue: String(value) } };
  return { key, value: { stringValue: value } };
}

export interface RequestSpec {
  client?: string;
  version?: string;
  declaration?: 'unknown' | 'none' | 'declared';
  serverDeclaration?: 'unknown' | 'none' | 'declared';
  method?: string;
  outcome?: string;
  count: number;
  startNs: bigint;
  timeNs: bigint;
  /** Replaces the value with a double (NaN etc.). */
  asDouble?: number;
  /** The MCP server's name and version (test-server 1.0.0 when not given). */
  server?: ServerSpec;
  extra?: Json[];
}

export interface ServerSpec {
  name: string;
  version: string;
}

const TEST_SERVER: ServerSpec = { name: 'test-server', version: '1.0.0' };

function serverAttributes(server: ServerSpec = TEST_SERVER): Json[] {
  return [attribute(ATTR_SERVER_NAME, server.name), attribute(ATTR_SERVER_VERSION, server.version)];
}

export interface ExtensionSpec extends RequestSpec {
  id: string;
  clientDeclared: boolean;
  serverDeclared: boolean;
  negotiated?: boolean;
  required?: boolean;
}

function requestAttributes(spec: RequestSpec): Json[] {
  return [
    ...serverAttributes(spec.server),
    attribute(ATTR_MCP_METHOD_NAME, spec.method ?? 'tools/call'),
    attribute(ATTR_ERA, 'modern'),
    ...(spec.client === undefined ? [] : [attribute(ATTR_CLIENT_NAME, spec.client)]),
    ...(spec.version === undefined ? [] : [attribute(ATTR_CLIENT_VERSION, spec.version)]),
    attribute(ATTR_CLIENT_DECLARATION, spec.declaration ?? 'declared'),
    attribute(ATTR_SERVER_DECLARATION, spec.serverDeclaration ?? 'declared'),
    attribute(ATTR_OUTCOME, spec.outcome ?? 'complete'),
    ...(spec.extra ?? []),
  ];
}

function point(attributes: Json[], spec: RequestSpec): Json {
  return {
    attributes,
    startTimeUnixNano: String(spec.startNs),
    timeUnixNano: String(spec.timeNs),
    ...(spec.asDouble === undefined ? { asInt: String(spec.count) } : { asDouble: spec.asDouble }),
  };
}

export function requestPoint(spec: RequestSpec): Json {
  return point(requestAttributes(spec), spec);
}

export function extensionPoint(spec: ExtensionSpec): Json {
  return point(
    [
      ...requestAttributes(spec),
      attribute(ATTR_EXTENSION_ID, spec.id),
      attribute(ATTR_EXTENSION_CLIENT_DECLARED, spec.clientDeclared),
      attribute(ATTR_EXTENSION_SERVER_DECLARED, spec.serverDeclared),
      attribute(ATTR_EXTENSION_NEGOTIATED, spec.negotiated ?? (spec.clientDeclared && spec.serverDeclared)),
      attribute(ATTR_EXTENSION_REQUIRED, spec.required ?? false),
    ],
    spec,
  );
}

export interface AdvertisedSpec {
  id: string;
  fingerprint: string;
  timeNs: bigint;
  serverName?: string;
  /** The whole server (name and version); overrides `serverName`. */
  server?: ServerSpec;
}

export function advertisedPoint(spec: AdvertisedSpec): Json {
  return {
    attributes: [
      ...serverAttributes(spec.server ?? { ...TEST_SERVER, name: spec.serverName ?? TEST_SERVER.name }),
      attribute(ATTR_EXTENSION_ID, spec.id),
      attribute(ATTR_EXTENSION_FINGERPRINT, spec.fingerprint),
    ],
    timeUnixNano: String(spec.timeNs),
    asInt: '1',
  };
}

export function countPoint(count: number, timeNs: bigint, serverName = TEST_SERVER.name, serverVersion = TEST_SERVER.version): Json {
  return {
    attributes: serverAttributes({ name: serverName, version: serverVersion }),
    timeUnixNano: String(timeNs),
    asInt: String(count),
  };
}

/** `extscope.process.ended` as the agent sends it in a process's last export: one gauge point of value 1. */
export function processEnded(timeNs: bigint): Json {
  return { name: METRIC_PROCESS_ENDED, unit: '{process}', gauge: { dataPoints: [{ timeUnixNano: String(timeNs), asInt: '1' }] } };
}

export interface ResourceSpec {
  service?: string;
  instance?: string;
  host?: string;
  /** `extscope.server.transport`, as the agent sets it (`stdio`: a per-session process). */
  transport?: 'stdio' | 'http';
  extra?: Json[];
}

export function resource(spec: ResourceSpec = {}): Json {
  return {
    attributes: [
      attribute(ATTR_SERVICE_NAME, spec.service ?? 'svc'),
      ...(spec.instance === undefined ? [] : [attribute(ATTR_SERVICE_INSTANCE_ID, spec.instance)]),
      attribute(ATTR_HOST_NAME, spec.host ?? 'host-1'),
      ...(spec.transport === undefined ? [] : [attribute(ATTR_SERVER_TRANSPORT, spec.transport)]),
      ...(spec.extra ?? []),
    ],
  };
}

export interface ResourceMetricsSpec {
  resource?: ResourceSpec;
  temporality?: number;
  requests?: Json[];
  extensions?: Json[];
  advertised?: Json[];
  counts?: Json[];
  other?: Json[];
}

export function resourceMetrics(spec: ResourceMetricsSpec): Json {
  const temporality = spec.temporality ?? DELTA;
  const metrics: Json[] = [];
  if (spec.requests !== undefined) {
    metrics.push({ name: METRIC_REQUESTS, unit: '{request}', sum: { aggregationTemporality: temporality, isMonotonic: true, dataPoints: spec.requests } });
  }
  if (spec.extensions !== undefined) {
    metrics.push({
      name: METRIC_EXTENSION_REQUESTS,
      unit: '{request}',
      sum: { aggregationTemporality: temporality, isMonotonic: true, dataPoints: spec.extensions },
    });
  }
  if (spec.advertised !== undefined) metrics.push({ name: METRIC_SERVER_EXTENSION_ADVERTISED, gauge: { dataPoints: spec.advertised } });
  if (spec.counts !== undefined) metrics.push({ name: METRIC_SERVER_EXTENSIONS, gauge: { dataPoints: spec.counts } });
  metrics.push(...(spec.other ?? []));
  return { resource: resource(spec.resource), scopeMetrics: [{ scope: { name: 'extscope', version: '0.1.0' }, metrics }] };
}

export function metricsRequest(...resources: ResourceMetricsSpec[]): Json {
  return { resourceMetrics: resources.map(resourceMetrics) };
}

export function encodeMetrics(request: Json): Buffer {
  return Buffer.from(MetricsRequest.encode(MetricsRequest.fromObject(request)).finish());
}

export function decodeMetrics(bytes: Uint8Array): Json {
  return MetricsRequest.toObject(MetricsRequest.decode(bytes), { longs: String, enums: Number });
}

export interface SpanSpec {
  traceId: string;
  spanId: string;
  name?: string;
  kind?: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Json[];
}

export function tracesRequest(resourceSpec: ResourceSpec, spans: SpanSpec[]): Json {
  return {
    resourceSpans: [
      {
        resource: resource(resourceSpec),
        scopeSpans: [
          {
            scope: { name: 'extscope' },
            spans: spans.map((span) => ({
              traceId: span.traceId,
              spanId: span.spanId,
              name: span.name ?? 'tools/call echo',
              kind: span.kind ?? 2,
              startTimeUnixNano: String(span.startNs),
              endTimeUnixNano: String(span.endNs),
              attributes: span.attributes,
            })),
          },
        ],
      },
    ],
  };
}

/** Traces in protobuf need the ids as bytes; OTLP/JSON keeps them hex. */
export function encodeTraces(request: Json): Buffer {
  const copy = structuredClone(request) as { resourceSpans: { scopeSpans: { spans: Json[] }[] }[] };
  for (const rs of copy.resourceSpans) {
    for (const ss of rs.scopeSpans) {
      for (const span of ss.spans) {
        span['traceId'] = Buffer.from(span['traceId'] as string, 'hex');
        span['spanId'] = Buffer.from(span['spanId'] as string, 'hex');
      }
    }
  }
  return Buffer.from(TraceRequest.encode(TraceRequest.fromObject(copy)).finish());
}

export interface PostOptions {
  format?: 'protobuf' | 'json';
  gzip?: boolean;
  token?: string;
  contentType?: string;
  body?: Buffer | string;
}

export async function post(url: string, path: '/v1/metrics' | '/v1/traces', request: Json | undefined, options: PostOptions = {}): Promise<Response> {
  const format = options.format ?? 'protobuf';
  let body: Buffer | string =
    options.body ?? (format === 'protobuf' ? (path === '/v1/metrics' ? encodeMetrics(request ?? {}) : encodeTraces(request ?? {})) : JSON.stringify(request));
  const headers: Record<string, string> = {
    'content-type': options.contentType ?? (format === 'protobuf' ? 'application/x-protobuf' : 'application/json'),
  };
  if (options.gzip) {
    body = gzipSync(body);
    headers['content-encoding'] = 'gzip';
  }
  if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
  return fetch(`${url}${path}`, { method: 'POST', headers, body });
}

export function postMetrics(url: string, request: Json | undefined, options: PostOptions = {}): Promise<Response> {
  return post(url, '/v1/metrics', request, options);
}
