import { type Json, MINUTE_NS, attribute, encodeMetrics, metricsRequest, msToNs, requestPoint } from '../collector/helpers/otlp.js';

const fillers = new Map<number, Buffer>();

/**
 * Protobuf of about `bytes`: one resource with a gauge outside the contract (an OpenTelemetry Collector forwarding
 * an application's own metrics alongside extscope's), which the collector decodes, counts as ignored, and drops.
 */
function filler(bytes: number): Buffer {
  const cached = fillers.get(bytes);
  if (cached !== undefined) return cached;
  const t = msToNs(Date.now());
  const point = (index: number): Json => ({
    attributes: [attribute('http.route', `/route/${index}`), attribute('http.method', 'GET'), attribute('host', `h-${index % 97}`)],
    startTimeUnixNano: String(t - MINUTE_NS),
    timeUnixNano: String(t),
    asDouble: index * 1.5,
  });
  const request = (points: number): Buffer =>
    encodeMetrics({
      resourceMetrics: [
        {
          resource: { attributes: [attribute('service.name', 'app')] },
          scopeMetrics: [{ metrics: [{ name: 'app.latency', gauge: { dataPoints: Array.from({ length: points }, (_, index) => point(index)) } }] }],
        },
      ],
    });
  const perPoint = request(1000).length / 1000;
  const body = request(Math.max(0, Math.floor(bytes / perPoint)));
  fillers.set(bytes, body);
  return body;
}

/**
 * A valid export of about `targetBytes`: `points` request points of distinct clients (each counted `count`) for
 * one instance, plus filler. Two encoded requests concatenated are one request with both lists (protobuf merges
 * repeated fields), so the filler is built once.
 */
export function bigExport(targetBytes: number, options: { instance?: string; points?: number; count?: number } = {}): { body: Buffer; requests: number } {
  const t = msToNs(Date.now());
  const points = options.points ?? 200;
  const count = options.count ?? 1;
  const requests: Json[] = [];
  for (let index = 0; index < points; index++) requests.push(requestPoint({ client: `client-${index}`, count, startNs: t - MINUTE_NS, timeNs: t }));
  const real = encodeMetrics(metricsRequest({ resource: { instance: options.instance ?? 'big-1' }, requests }));
  const body = Buffer.concat([real, filler(Math.max(0, targetBytes - real.length - 1024))]);
  return { body, requests: points * count };
}

/**
 * A valid export made only of counted points: `points` request points over `clients` client names (and as many
 * versions as it takes), each counted `count`, for one instance: every point is normalised and stored.
 */
export function wideExport(points: number, options: { instance?: string; clients?: number; count?: number } = {}): { body: Buffer; requests: number } {
  const t = msToNs(Date.now());
  const clients = options.clients ?? 1000;
  const count = options.count ?? 1;
  const requests: Json[] = [];
  for (let index = 0; index < points; index++) {
    requests.push(requestPoint({ client: `client-${index % clients}`, version: `${Math.floor(index / clients)}.0`, count, startNs: t - MINUTE_NS, timeNs: t }));
  }
  return { body: encodeMetrics(metricsRequest({ resource: { instance: options.instance ?? 'wide-1' }, requests })), requests: points * count };
}
