import { ATTR_CLIENT_DECLARATION, ATTR_CLIENT_NAME, ATTR_CLIENT_VERSION, ATTR_ERA, ATTR_EXTENSION_CLIENT_DECLARED, ATTR_EXTENSION_FINGERPRINT, ATTR_EXTENSION_ID, ATTR_EXTENSION_NEGOTIATED, ATTR_EXTENSION_REQUIRED, ATTR_EXTENSION_SERVER_DECLARED, ATTR_MCP_METHOD_NAME, ATTR_MCP_PROTOCOL_VERSION, ATTR_OUTCOME, ATTR_RPC_RESPONSE_STATUS_CODE, ATTR_SERVER_DECLARATION, ATTR_SERVER_NAME, ATTR_SERVER_VERSION, DECLARATION, INVALID_EXTENSION_ID, METRIC_AGENT_ERRORS, METRIC_AGENT_IDS_REJECTED, METRIC_AGENT_OVERFLOW, METRIC_EXTENSION_REQUESTS, METRIC_REQUESTS, METRIC_SERVER_EXTENSIONS, METRIC_SERVER_EXTENSION_ADVERTISED } from '../../contract/index.js';
import { type ExportMetricsServiceRequest, FLAG_NO_RECORDED_VALUE, type KeyValue, type Metric, type NumberDataPoint } from '../otlp/messages.js';
import { ContractValues } from './contract-values.js';
import { nanosToMs, scalarBoolean, scalarString, signedInteger, unsignedNanos, canonicalValue } from './otlp-values.js';
import {
  type AdvertisedCount,
  type AdvertisedPoint,
  type CounterPoint,
  type IgnoredReason,
  type MetricsBatch,
  type ResourceBatch,
  type SeriesDims,
  SeriesKind,
  Temporality,
} from './points.js';
import { ExportRejection } from './rejection.js';

export interface NormaliseOptions {
  now: number;
  maxAttributeLength: number;
  maxFutureSkewMs: number;
  /** Points older than this (relative to `now`) are refused individually: their dedup keys are gone. */
  dedupWindowMs: number;
}

const AGENT_HEALTH_METRICS = new Set<string>([METRIC_AGENT_ERRORS, METRIC_AGENT_IDS_REJECTED, METRIC_AGENT_OVERFLOW]);
const CLIENT_DECLARATIONS = new Set<string>([DECLARATION.unknown, DECLARATION.none, DECLARATION.declared]);

/** Slots of the contract attributes in a point's raw identity (order is part of the stream key format). */
const SLOT: Record<string, number> = {
  [ATTR_SERVER_NAME]: 0,
  [ATTR_SERVER_VERSION]: 1,
  [ATTR_MCP_METHOD_NAME]: 2,
  [ATTR_ERA]: 3,
  [ATTR_MCP_PROTOCOL_VERSION]: 4,
  [ATTR_CLIENT_NAME]: 5,
  [ATTR_CLIENT_VERSION]: 6,
  [ATTR_CLIENT_DECLARATION]: 7,
  [ATTR_SERVER_DECLARATION]: 8,
  [ATTR_OUTCOME]: 9,
  [ATTR_RPC_RESPONSE_STATUS_CODE]: 10,
  [ATTR_EXTENSION_ID]: 11,
  [ATTR_EXTENSION_CLIENT_DECLARED]: 12,
  [ATTR_EXTENSION_SERVER_DECLARED]: 13,
  [ATTR_EXTENSION_NEGOTIATED]: 14,
  [ATTR_EXTENSION_REQUIRED]: 15,
};
/** Slots below this hold strings, the rest booleans. */
const STRING_SLOTS = 12;
const SLOT_COUNT = 16;

/**
 * OTLP metrics → the extscope contract. Validates everything before the store sees anything, so that a refused
 * export stores nothing: an {@link ExportRejection} is thrown for the whole export; points of metrics we do not
 * use are counted in `ignored`; points too old to be deduplicated are counted in `rejected` (partial success).
 */
export class MetricsNormaliser {
  private readonly values: ContractValues;
  /** Validated dimensions per kind and attribute set: the same streams arrive every export. */
  private readonly dimsCache = [new Map<string, SeriesDims>(), new Map<string, SeriesDims>()] as const;

  constructor(maxAttributeLength: number) {
    this.values = new ContractValues(maxAttributeLength);
  }

  normalise(request: ExportMetricsServiceRequest, options: NormaliseOptions): MetricsBatch {
    const batch: MetricsBatch = { resources: [], ignored: new Map(), rejected: 0, rejectedReason: undefined };
    const context = new PointContext(options, batch);
    const resourceMetrics = request.resourceMetrics ?? [];
    for (let r = 0; r < resourceMetrics.length; r++) {
      const rm = resourceMetrics[r];
      if (rm === undefined || rm === null) continue;
      const where = `resourceMetrics[${r}]`;
      const resourceBatch: ResourceBatch = {
        resource: this.values.resource(rm.resource?.attributes ?? [], `${where}.resource`),
        counters: [],
        advertised: [],
        advertisedCounts: [],
      };
      let ours = false;
      for (const sm of rm.scopeMetrics ?? []) {
        const scopeKey = `${JSON.stringify(sm.scope?.name ?? '')}${JSON.stringify(sm.scope?.version ?? '')}`;
        for (const metric of sm.metrics ?? []) {
          ours = this.metric(metric, `${resourceBatch.resource.key}\u0000${scopeKey}`, resourceBatch, context, where) || ours;
        }
      }
      if (ours) batch.resources.push(resourceBatch);
    }
    return batch;
  }

  /** Returns whether the metric belongs to the extscope contract. */
  private metric(metric: Metric, scopeKey: string, out: ResourceBatch, context: PointContext, where: string): boolean {
    const name = metric.name ?? '';
    if (name === METRIC_REQUESTS || name === METRIC_EXTENSION_REQUESTS) {
      const sum = metric.sum;
      const temporality = sum?.aggregationTemporality;
      if (!sum || sum.isMonotonic !== true || (temporality !== Temporality.Delta && temporality !== Temporality.Cumulative)) {
        context.ignore('unsupported_type', countPoints(metric));
        return true;
      }
      const kind = name === METRIC_REQUESTS ? SeriesKind.Requests : SeriesKind.Extension;
      const metricKey = `${scopeKey}${name}\u0000${temporality}`;
      for (const point of sum.dataPoints ?? []) {
        const counter = this.counter(point, kind, temporality, metricKey, context, `${where} ${name}`);
        if (counter !== undefined) out.counters.push(counter);
      }
      return true;
    }
    if (name === METRIC_SERVER_EXTENSION_ADVERTISED || name === METRIC_SERVER_EXTENSIONS) {
      const points = metric.gauge?.dataPoints ?? metric.sum?.dataPoints;
      if (points === null || points === undefined) {
        context.ignore('unsupported_type', countPoints(metric));
        return true;
      }
      for (const point of points) {
        if (name === METRIC_SERVER_EXTENSION_ADVERTISED) {
          const advertised = this.advertised(point, context, `${where} ${name}`);
          if (advertised !== undefined) out.advertised.push(advertised);
        } else {
          const count = this.advertisedCount(point, context, `${where} ${name}`);
          if (count !== undefined) out.advertisedCounts.push(count);
        }
      }
      return true;
    }
    if (AGENT_HEALTH_METRICS.has(name)) {
      context.ignore('not_stored', countPoints(metric));
      return true;
    }
    context.ignore('unknown_metric', countPoints(metric));
    return false;
  }

  private counter(
    point: NumberDataPoint,
    kind: SeriesKind,
    temporality: Temporality,
    metricKey: string,
    context: PointContext,
    where: string,
  ): CounterPoint | undefined {
    if (((point.flags ?? 0) & FLAG_NO_RECORDED_VALUE) !== 0) {
      context.ignore('no_recorded_value', 1);
      return undefined;
    }
    const timeNs = context.time(point, where);
    const startNs = unsignedNanos(point.startTimeUnixNano) ?? 0n;
    if (startNs < 0n || startNs > timeNs) throw new ExportRejection(`${where}: start_time_unix_nano is after time_unix_nano`, 'bad_timestamp');
    const value = countValue(point, where);
    if (value === undefined) {
      context.ignore('no_recorded_value', 1);
      return undefined;
    }
    if (context.tooOld(timeNs)) return undefined;

    const raw: (string | boolean | undefined)[] = new Array(SLOT_COUNT);
    const extras: string[] = [];
    for (const attribute of point.attributes ?? []) this.readAttribute(attribute, raw, extras, where);
    // JSON keeps attacker-chosen strings from making two different attribute sets look alike.
    const streamAttributes = extras.length === 0 ? JSON.stringify(raw) : `${JSON.stringify(raw)}\u0000${extras.sort().join(',')}`;
    const cache = this.dimsCache[kind];
    let dims = cache.get(streamAttributes);
    if (dims === undefined) {
      dims = this.dims(kind, raw, where);
      if (cache.size >= 100_000) cache.clear();
      cache.set(streamAttributes, dims);
    }
    return { dims, streamScope: metricKey, streamAttributes, temporality, startNs, timeNs, value };
  }

  private readAttribute(attribute: KeyValue, raw: (string | boolean | undefined)[], extras: string[], where: string): void {
    const key = attribute.key ?? '';
    const slot = SLOT[key];
    if (slot === undefined) {
      extras.push(`${JSON.stringify(key)}=${canonicalValue(attribute.value)}`);
      return;
    }
    if (slot < STRING_SLOTS) {
      const value = scalarString(attribute.value);
      if (value === undefined) throw new ExportRejection(`${where}: attribute ${key} must be a string`, 'bad_attribute');
      raw[slot] = this.values.keep(where, key, value);
    } else {
      const value = scalarBoolean(attribute.value);
      if (value === undefined) throw new ExportRejection(`${where}: attribute ${key} must be a boolean`, 'bad_attribute');
      raw[slot] = value;
    }
  }

  private dims(kind: SeriesKind, raw: readonly (string | boolean | undefined)[], where: string): SeriesDims {
    const text = (slot: number): string | null => (raw[slot] as string | undefined) ?? null;
    const flag = (slot: number): boolean | undefined => raw[slot] as boolean | undefined;
    const clientDeclaration = text(7);
    if (clientDeclaration === null || !CLIENT_DECLARATIONS.has(clientDeclaration)) {
      throw new ExportRejection(
        `${where}: attribute ${ATTR_CLIENT_DECLARATION} must be one of unknown, none, declared (got ${clientDeclaration === null ? 'nothing' : JSON.stringify(clientDeclaration)})`,
        'bad_attribute',
      );
    }
    const serverDeclaration = text(8);
    if (serverDeclaration !== null && !CLIENT_DECLARATIONS.has(serverDeclaration)) {
      throw new ExportRejection(`${where}: attribute ${ATTR_SERVER_DECLARATION} must be one of unknown, none, declared`, 'bad_attribute');
    }
    const dims: SeriesDims = {
      kind,
      serverName: text(0),
      serverVersion: text(1),
      method: text(2),
      era: text(3),
      protocolVersion: text(4),
      clientName: text(5),
      clientVersion: text(6),
      clientDeclaration,
      serverDeclaration,
      outcome: text(9),
      statusCode: text(10),
      extensionId: null,
      clientDeclared: null,
      serverDeclared: null,
      negotiated: null,
      required: null,
    };
    if (kind === SeriesKind.Requests) return dims;

    const rawId = text(11);
    const clientDeclared = flag(12);
    const serverDeclared = flag(13);
    if (rawId === null || clientDeclared === undefined || serverDeclared === undefined) {
      throw new ExportRejection(
        `${where}: ${METRIC_EXTENSION_REQUESTS} points need ${ATTR_EXTENSION_ID}, ${ATTR_EXTENSION_CLIENT_DECLARED} and ${ATTR_EXTENSION_SERVER_DECLARED}`,
        'bad_attribute',
      );
    }
    const extensionId = this.values.extensionId(rawId);
    let negotiated = flag(14) ?? (clientDeclared && serverDeclared);
    if (negotiated && !(clientDeclared && serverDeclared)) {
      throw new ExportRejection(`${where}: ${ATTR_EXTENSION_NEGOTIATED} is true but the id was not declared by both sides`, 'bad_attribute');
    }
    // Nothing is negotiated under an id nobody can name (the agent's rule for its `_invalid` bucket).
    if (extensionId === INVALID_EXTENSION_ID) negotiated = false;
    dims.extensionId = extensionId;
    dims.clientDeclared = clientDeclared;
    dims.serverDeclared = serverDeclared;
    dims.negotiated = negotiated;
    dims.required = flag(15) ?? false;
    return dims;
  }

  private advertised(point: NumberDataPoint, context: PointContext, where: string): AdvertisedPoint | undefined {
    if (((point.flags ?? 0) & FLAG_NO_RECORDED_VALUE) !== 0) {
      context.ignore('no_recorded_value', 1);
      return undefined;
    }
    const timeNs = context.time(point, where);
    const value = gaugeValue(point, where);
    if (context.tooOld(timeNs)) return undefined;
    if (value === undefined || value <= 0) {
      context.ignore('not_advertised', 1);
      return undefined;
    }
    let serverName: string | null = null;
    let serverVersion: string | null = null;
    let id: string | undefined;
    let fingerprint: string | null = null;
    for (const attribute of point.attributes ?? []) {
      const key = attribute.key ?? '';
      if (key !== ATTR_SERVER_NAME && key !== ATTR_SERVER_VERSION && key !== ATTR_EXTENSION_ID && key !== ATTR_EXTENSION_FINGERPRINT) continue;
      const text = scalarString(attribute.value);
      if (text === undefined) throw new ExportRejection(`${where}: attribute ${key} must be a string`, 'bad_attribute');
      this.values.keep(where, key, text);
      if (key === ATTR_SERVER_NAME) serverName = text;
      else if (key === ATTR_SERVER_VERSION) serverVersion = text;
      else if (key === ATTR_EXTENSION_ID) id = text;
      else fingerprint = text;
    }
    if (id === undefined) throw new ExportRejection(`${where}: points need ${ATTR_EXTENSION_ID}`, 'bad_attribute');
    return { serverName, serverVersion, extensionId: this.values.extensionId(id), fingerprint, timeMs: nanosToMs(timeNs) };
  }

  private advertisedCount(point: NumberDataPoint, context: PointContext, where: string): AdvertisedCount | undefined {
    if (((point.flags ?? 0) & FLAG_NO_RECORDED_VALUE) !== 0) {
      context.ignore('no_recorded_value', 1);
      return undefined;
    }
    const timeNs = context.time(point, where);
    const count = countValue(point, where);
    if (count === undefined) {
      context.ignore('no_recorded_value', 1);
      return undefined;
    }
    if (context.tooOld(timeNs)) return undefined;
    let serverName: string | null = null;
    let serverVersion: string | null = null;
    for (const attribute of point.attributes ?? []) {
      const key = attribute.key ?? '';
      if (key !== ATTR_SERVER_NAME && key !== ATTR_SERVER_VERSION) continue;
      const text = scalarString(attribute.value);
      if (text === undefined) throw new ExportRejection(`${where}: attribute ${key} must be a string`, 'bad_attribute');
      this.values.keep(where, key, text);
      if (key === ATTR_SERVER_NAME) serverName = text;
      else serverVersion = text;
    }
    return { serverName, serverVersion, count, timeMs: nanosToMs(timeNs) };
  }
}

/** Per-export bookkeeping shared by the point readers. */
class PointContext {
  private readonly maxTimeNs: bigint;
  private readonly minTimeNs: bigint;

  constructor(
    private readonly options: NormaliseOptions,
    private readonly batch: MetricsBatch,
  ) {
    this.maxTimeNs = BigInt(options.now + options.maxFutureSkewMs) * 1_000_000n;
    this.minTimeNs = BigInt(options.now - options.dedupWindowMs) * 1_000_000n;
  }

  ignore(reason: IgnoredReason, count: number): void {
    if (count > 0) this.batch.ignored.set(reason, (this.batch.ignored.get(reason) ?? 0) + count);
  }

  time(point: NumberDataPoint, where: string): bigint {
    const timeNs = unsignedNanos(point.timeUnixNano);
    if (timeNs === undefined || timeNs <= 0n) throw new ExportRejection(`${where}: a data point has no time_unix_nano`, 'bad_timestamp');
    if (timeNs > this.maxTimeNs) {
      throw new ExportRejection(
        `${where}: a data point is dated ${new Date(Number(timeNs / 1_000_000n)).toISOString()}, more than ${Math.round(this.options.maxFutureSkewMs / 1000)} s ahead of the collector's clock`,
        'future_timestamp',
      );
    }
    return timeNs;
  }

  /** Counts the point as refused when it is older than the dedup window. */
  tooOld(timeNs: bigint): boolean {
    if (timeNs >= this.minTimeNs) return false;
    this.batch.rejected++;
    this.batch.rejectedReason = `data points older than ${Math.round(this.options.dedupWindowMs / 3_600_000)} h were not applied: a retry of them could no longer be recognised`;
    return true;
  }
}

function countPoints(metric: Metric): number {
  return (
    (metric.sum?.dataPoints?.length ?? 0) +
    (metric.gauge?.dataPoints?.length ?? 0) +
    (metric.histogram?.dataPoints?.length ?? 0) +
    (metric.exponentialHistogram?.dataPoints?.length ?? 0) +
    (metric.summary?.dataPoints?.length ?? 0)
  );
}

/** A count: whole and non-negative. `undefined` when the point carries no value at all. */
function countValue(point: NumberDataPoint, where: string): number | undefined {
  let value: number;
  if (point.asInt !== null && point.asInt !== undefined) {
    value = signedInteger(point.asInt);
    if (Number.isNaN(value)) throw new ExportRejection(`${where}: an integer count is beyond 2^53`, 'bad_value');
  } else if (point.asDouble !== null && point.asDouble !== undefined) value = point.asDouble;
  else return undefined;
  if (!Number.isFinite(value)) throw new ExportRejection(`${where}: a count is ${String(value)}`, 'bad_value');
  if (value < 0) throw new ExportRejection(`${where}: a count is negative (${value})`, 'bad_value');
  if (!Number.isSafeInteger(value)) throw new ExportRejection(`${where}: a count is not a whole number below 2^53 (${value})`, 'bad_value');
  return value;
}

function gaugeValue(point: NumberDataPoint, where: string): number | undefined {
  let value: number;
  if (point.asInt !== null && point.asInt !== undefined) value = signedInteger(point.asInt);
  else if (point.asDouble !== null && point.asDouble !== undefined) value = point.asDouble;
  else return undefined;
  if (!Number.isFinite(value)) throw new ExportRejection(`${where}: a gauge value is ${String(value)}`, 'bad_value');
  if (value < 0) throw new ExportRejection(`${where}: a gauge value is negative (${value})`, 'bad_value');
  return value;
}
