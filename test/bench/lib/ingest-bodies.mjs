// The ingest benchmarks' recorded exports: a fleet's agent collections, one export per instance and minute, as
// protobuf bodies (the warm-up round, then the steady rounds), and the rows a raw loop writes for them. Deterministic
// (seeded), so that two builds, or two benchmarks, replay the same bodies.
import { MetricsRequest } from '../../../dist/collector/otlp/proto-root.js';
import { fleet, rng } from './fleet.mjs';

const HOUR_MS = 3_600_000;
const kv = (key, value) => ({ key, value: typeof value === 'boolean' ? { boolValue: value } : { stringValue: value } });

/**
 * `instances` instances, a warm-up round (round 0: every stream's first export) and `rounds` one-minute rounds;
 * `batch` resources per request; `cumulative`: running totals per stream since one process start (else delta).
 * Returns `{ warmup, bodies, beforeHour, hourRound, rowBatches, counterPoints, gaugePoints, requestsSent, streams }`.
 */
export function ingestBodies({ instances: INSTANCES, rounds: ROUNDS, batch: BATCH = 1, cumulative: CUMULATIVE = false }) {
  /**
   * The steady rounds cross a UTC hour in their middle: rounds from HOUR_ROUND on fall in the next hour, where every
   * instance's first export of the hour has its extension ids admitted again (the distinct-id limit's sets are per
   * hour), so the figures include that as a running fleet's do. The hour is the latest one the rounds fit before now.
   */
  const HOUR_ROUND = Math.floor(ROUNDS / 2) + 1;
  const HOUR_START_MS = Math.floor((Date.now() - (ROUNDS - HOUR_ROUND + 2) * 60_000) / HOUR_MS) * HOUR_MS;
  /** When round `round`'s minute ends: round HOUR_ROUND's is the hour's first minute. */
  const roundEndMs = (round) => HOUR_START_MS + (round - HOUR_ROUND + 1) * 60_000;
  /** Running totals per stream (cumulative), and the one start time of every sender process. */
  const totals = new Map();
  const processStartNs = String(BigInt(roundEndMs(0) - 2 * 60_000) * 1_000_000n);

  /** One agent collection of one instance for one minute: its active streams with non-zero increments. */
  function collection(instance, round, random, rows, streamIds, cellIds) {
    const endMs = roundEndMs(round);
    const start = String(BigInt(endMs - 60_000) * 1_000_000n);
    const time = String(BigInt(endMs) * 1_000_000n);
    const minute = Math.floor(endMs / 60_000);
    const requests = [];
    const extensions = [];
    let total = 0;
    const add = (list, attributes, count, cell) => {
      const key = `${instance.instanceId}|${list === requests ? 'r' : 'e'}|${JSON.stringify(attributes)}`;
      const total = (totals.get(key) ?? 0) + count;
      totals.set(key, total);
      list.push(
        CUMULATIVE
          ? { attributes, startTimeUnixNano: processStartNs, timeUnixNano: time, asInt: String(total) }
          : { attributes, startTimeUnixNano: start, timeUnixNano: time, asInt: String(count) },
      );
      let id = streamIds.get(key);
      if (id === undefined) streamIds.set(key, (id = streamIds.size + 1));
      const cellId = (key) => {
        let value = cellIds.get(key);
        if (value === undefined) cellIds.set(key, (value = cellIds.size + 1));
        return value;
      };
      rows.push([id, cellId(`${instance.service}|${cell}`), minute, count, BigInt(time), BigInt(start), cellId(`*|${cell}`)]);
    };
    // About six of the instance's ten client versions are active in a given minute (all of them, with errors
    // too, in the warm-up round, so that it creates every stream the instance will ever report).
    const warmup = round === 0;
    for (const client of instance.clients) {
      if (!warmup && random() < 0.4) continue;
      const base = [
        kv('extscope.server.name', instance.serverName),
        kv('extscope.server.version', '2.3.1'),
        kv('mcp.method.name', 'tools/call'),
        kv('extscope.era', 'modern'),
        kv('mcp.protocol.version', '2026-07-28'),
        kv('extscope.client.name', client.name),
        kv('extscope.client.version', client.version),
        kv('extscope.client.declaration', 'declared'),
        kv('extscope.server.declaration', 'declared'),
      ];
      const calls = 1 + Math.floor(random() * 40);
      const errors = warmup || random() < 0.3 ? 1 + Math.floor(random() * 3) : 0;
      const who = `${client.name}|${client.version}`;
      add(requests, [...base, kv('extscope.outcome', 'complete')], calls, `${who}|declared`);
      if (errors > 0) add(requests, [...base, kv('extscope.outcome', 'tool_error')], errors, `${who}|declared`);
      total += calls + errors;
      const advertised = new Set(instance.advertised);
      const ids = new Set([...client.declared, ...instance.advertised]);
      for (const id of ids) {
        const clientDeclared = client.declared.includes(id);
        const serverDeclared = advertised.has(id);
        add(
          extensions,
          [
            ...base,
            kv('extscope.outcome', 'complete'),
            kv('extscope.extension.id', id),
            kv('extscope.extension.client_declared', clientDeclared),
            kv('extscope.extension.server_declared', serverDeclared),
            kv('extscope.extension.negotiated', clientDeclared && serverDeclared),
            kv('extscope.extension.required', false),
          ],
          calls + errors,
          `${who}|${id}|${clientDeclared}|${serverDeclared}`,
        );
      }
    }
    const gaugeTime = time;
    const advertisedPoints = instance.advertised.map((id, index) => ({
      attributes: [
        kv('extscope.server.name', instance.serverName),
        kv('extscope.server.version', '2.3.1'),
        kv('extscope.extension.id', id),
        kv('extscope.extension.fingerprint', `f${index}a4c9e0d71b2f3`),
      ],
      timeUnixNano: gaugeTime,
      asInt: '1',
    }));
    return {
      total,
      counterPoints: requests.length + extensions.length,
      gaugePoints: advertisedPoints.length + 1,
      resourceMetrics: {
        resource: {
          attributes: [
            kv('service.name', instance.service),
            kv('service.version', '2.3.1'),
            kv('service.instance.id', instance.instanceId),
            kv('host.name', instance.host),
            kv('extscope.server.name', instance.serverName),
            kv('extscope.server.version', '2.3.1'),
            kv('telemetry.sdk.language', 'nodejs'),
            kv('telemetry.sdk.name', 'opentelemetry'),
            kv('telemetry.sdk.version', '2.12.0'),
            kv('process.runtime.name', 'nodejs'),
          ],
        },
        scopeMetrics: [
          {
            scope: { name: 'extscope', version: '0.1.0' },
            metrics: [
              { name: 'extscope.requests', unit: '{request}', sum: { aggregationTemporality: CUMULATIVE ? 2 : 1, isMonotonic: true, dataPoints: requests } },
              {
                name: 'extscope.extension.requests',
                unit: '{request}',
                sum: { aggregationTemporality: CUMULATIVE ? 2 : 1, isMonotonic: true, dataPoints: extensions },
              },
              { name: 'extscope.server.extension.advertised', unit: '{extension}', gauge: { dataPoints: advertisedPoints } },
              {
                name: 'extscope.server.extensions',
                unit: '{extension}',
                gauge: {
                  dataPoints: [
                    {
                      attributes: [kv('extscope.server.name', instance.serverName), kv('extscope.server.version', '2.3.1')],
                      timeUnixNano: gaugeTime,
                      asInt: String(advertisedPoints.length),
                    },
                  ],
                },
              },
            ],
          },
        ],
      },
    };
  }

  function build() {
    const { instances } = fleet({ services: Math.max(1, Math.round(INSTANCES / 25)), perService: Math.min(25, INSTANCES) });
    const random = rng(7);
    const streamIds = new Map();
    const cellIds = new Map();
    const bodies = [];
    const rowBatches = [];
    let counterPoints = 0;
    let gaugePoints = 0;
    let requestsSent = 0;
    let warmup;
    // Round 0 is the warm-up: the first export of every stream creates its series (a one-time cost per stream,
    // reported separately); rounds 1.. are the steady state of a running fleet.
    for (let round = 0; round <= ROUNDS; round++) {
      if (round === 1) {
        warmup = { bodies: bodies.splice(0), rowBatches: rowBatches.splice(0), counterPoints, gaugePoints, requestsSent };
        counterPoints = 0;
        gaugePoints = 0;
        requestsSent = 0;
      }
      for (let first = 0; first < instances.length; first += BATCH) {
        const rows = [];
        const resources = [];
        for (const instance of instances.slice(first, first + BATCH)) {
          const export_ = collection(instance, round, random, rows, streamIds, cellIds);
          counterPoints += export_.counterPoints;
          gaugePoints += export_.gaugePoints;
          requestsSent += export_.total;
          resources.push(export_.resourceMetrics);
        }
        bodies.push(Buffer.from(MetricsRequest.encode(MetricsRequest.fromObject({ resourceMetrics: resources })).finish()));
        rowBatches.push(rows);
      }
    }
    // The steady bodies sent before the hour turns: rounds 1 to HOUR_ROUND − 1.
    const beforeHour = (HOUR_ROUND - 1) * Math.ceil(instances.length / BATCH);
    return { warmup, bodies, beforeHour, hourRound: HOUR_ROUND, rowBatches, counterPoints, gaugePoints, requestsSent, streams: streamIds.size };
  }
  return build();
}
