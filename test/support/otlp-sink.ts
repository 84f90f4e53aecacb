/**
 * A minimal OTLP/HTTP receiver on loopback for agent tests: decodes protobuf (with the collector's generated OTLP
 * definitions) and JSON, and keeps every data point and span.
 */
import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { MetricsRequest, TraceRequest } from '../../collector/otlp/proto-root.js';

const CUMULATIVE = 2;

type AnyValue = { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };
type KeyValue = { key: string; value?: AnyValue };

export interface SinkPoint {
  resource: Record<string, unknown>;
  metric: string;
  attributes: Record<string, unknown>;
  value: number;
  /** 1 delta, 2 cumulative (sums only). */
  temporality: number | undefined;
  startTimeUnixNano: string;
  timeUnixNano: string;
}

export interface SinkSpan {
  resource: Record<string, unknown>;
  name: string;
  traceId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
}

function value(any: AnyValue | undefined): unknown {
  if (any === undefined) return undefined;
  if (any.stringValue !== undefined) return any.stringValue;
  if (any.boolValue !== undefined) return any.boolValue;
  if (any.intValue !== undefined) return Number(any.intValue);
  if (any.doubleValue !== undefined) return any.doubleValue;
  if (any.arrayValue !== undefined) return (any.arrayValue.values ?? []).map(value);
  return undefined;
}

function attributes(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, value(kv.value)]));
}

/** A fixed64 time as decimal digits, whichever way the encoding gave it. */
function nanos(value: unknown): string {
  if (typeof value === 'string' && /^\d+$/.test(value)) return value;
  if (typeof value === 'number' && Number.isFinite(value)) return BigInt(Math.round(value)).toString();
  return '0';
}

function hex(id: unknown): string {
  if (typeof id === 'string') return /^[0-9a-f]*$/i.test(id) ? id.toLowerCase() : Buffer.from(id, 'base64').toString('hex');
  return id instanceof Uint8Array ? Buffer.from(id).toString('hex') : '';
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  return request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body;
}

export interface OtlpSink {
  url: string;
  points: SinkPoint[];
  spans: SinkSpan[];
  exports: number;
  /**
   * The total of one metric over the streams whose attributes include `match`: delta points add up; of a
   * cumulative stream (one resource, attribute set and start time) the latest point is its total.
   */
  sum(metric: string, match?: Record<string, unknown>): number;
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  const sink: OtlpSink = {
    url: '',
    points: [],
    spans: [],
    exports: 0,
    sum(metric, match = {}) {
      let total = 0;
      const latest = new Map<string, SinkPoint>();
      for (const point of this.points) {
        if (point.metric !== metric || !Object.entries(match).every(([k, v]) => point.attributes[k] === v)) continue;
        if (point.temporality !== CUMULATIVE) {
          total += point.value;
          continue;
        }
        const stream = JSON.stringify([point.resource, point.attributes, point.startTimeUnixNano]);
        const last = latest.get(stream);
        if (last === undefined || BigInt(point.timeUnixNano) >= BigInt(last.timeUnixNano)) latest.set(stream, point);
      }
      for (const point of latest.values()) total += point.value;
      return total;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server: Server = createServer(async (request, response) => {
    try {
      const body = await readBody(request);
      const json = String(request.headers['content-type']).includes('json');
      const decode = (type: typeof MetricsRequest) =>
        json ? JSON.parse(body.toString('utf8')) : type.toObject(type.decode(body), { longs: String, bytes: String });
      if (request.url === '/v1/metrics') {
        const message = decode(MetricsRequest);
        for (const rm of message.resourceMetrics ?? []) {
          const resource = attributes(rm.resource?.attributes);
          for (const sm of rm.scopeMetrics ?? []) {
            for (const metric of sm.metrics ?? []) {
              const data = metric.sum ?? metric.gauge;
              for (const point of data?.dataPoints ?? []) {
                sink.points.push({
                  resource,
                  metric: metric.name,
                  attributes: attributes(point.attributes),
                  value: Number(point.asInt ?? point.asDouble ?? 0),
                  temporality: metric.sum?.aggregationTemporality,
                  startTimeUnixNano: nanos(point.startTimeUnixNano),
                  timeUnixNano: nanos(point.timeUnixNano),
                });
              }
            }
          }
        }
      } else if (request.url === '/v1/traces') {
        const message = decode(TraceRequest);
        for (const rs of message.resourceSpans ?? []) {
          const resource = attributes(rs.resource?.attributes);
          for (const ss of rs.scopeSpans ?? []) {
            for (const span of ss.spans ?? []) {
              sink.spans.push({
                resource,
                name: span.name,
                traceId: hex(span.traceId),
                parentSpanId: hex(span.parentSpanId),
                attributes: attributes(span.attributes),
              });
            }
          }
        }
      }
      sink.exports++;
      response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
      response.end(json ? '{}' : '');
    } catch (error) {
      response.writeHead(400);
      response.end(String(error));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sink.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return sink;
}
