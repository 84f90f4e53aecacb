import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { ATTR_EXTENSION_NEGOTIATED, METRICS, isNegotiated } from '../../../contract/index.js';
import {
  type AdvertisedCount,
  type AdvertisedPoint,
  type CounterPoint,
  type MetricsBatch,
  type ResourceBatch,
  type SeriesDims,
  SeriesKind,
  Temporality,
} from '../../model/batches.js';
import type { MetricsConsumer, MetricsOutcome } from '../../model/consumer.js';
import { PermanentError } from '../../model/errors.js';
import { addRejected } from '../../model/rejections.js';
import { nanosToMs } from '../../model/time.js';
import type { ExportMetricsServiceRequest, Metric, NumberDataPoint } from '../../otlp/messages.js';
import { unsignedNanos } from '../../otlp/values.js';
import { ContractValues } from '../contract-values.js';
import { AttributeReader } from './attributes.js';
import { PointContext, type PointWindow, countPoints, countValue, gaugeValue } from './point-checks.js';
import { StreamIdentity } from './stream-identity.js';
import { schema1StreamAttributes } from './stream-key-v1.js';

export interface NormaliseMetricsConfig {
  maxAttributeLength: number;
  maxFutureSkewMs: number;
  /** Points older than this are refused one by one: a retry of them could no longer be recognised. */
  dedupWindowMs: number;
  clock: () => number;
}

const AGENT_HEALTH_METRICS = new Set<string>([METRICS.agentErrors.name, METRICS.agentIdsRejected.name, METRICS.agentOverflow.name]);
const CUMULATIVE_WITHOUT_IDENTITY =
  'cumulative data points without the service.instance.id resource attribute, nor host.name and process.pid, were not applied: ' +
  "the collector could not tell two processes' running totals apart (set service.instance.id, or send delta temporality)";
const CUMULATIVE_WITHOUT_START =
  'cumulative data points without start_time_unix_nano from a sender without service.instance.id were not applied: ' +
  'a restart that gets the same pid could not be told apart (set service.instance.id, or send start times)';
/** Data points read between two turns of the event loop: a large export does not hold up other requests meanwhile. */
export const NORMALISE_STEP_POINTS = 1000;
/** Streams remembered per kind (the same streams arrive every export); cleared when full. */
const STREAMS_CACHE_SIZE = 100_000;

/** What a stream's canonical attributes are read to, once: its validated dimensions and its schema-1 key part. */
interface KnownStream {
  dims: SeriesDims;
  schema1Attributes: string;
}

/**
 * OTLP metrics → the extscope contract, then the next consumer. Validates everything before anything is
 * handed on, so that a refused export stores nothing: a {@link PermanentError} refuses the whole export;
 * points of metrics we do not use are counted in `ignored`; points too old to be deduplicated, and cumulative
 * points whose process cannot be told apart (processor/sender-identity.ts), are counted in `rejections` (partial
 * success), by reason and service.
 */
export class NormaliseMetrics implements MetricsConsumer<ExportMetricsServiceRequest> {
  private readonly values: ContractValues;
  private readonly requests: AttributeReader<typeof METRICS.requests.attributes>;
  private readonly extensions: AttributeReader<typeof METRICS.extensionRequests.attributes>;
  private readonly advertisedAttributes: AttributeReader<typeof METRICS.advertised.attributes>;
  private readonly countAttributes: AttributeReader<typeof METRICS.advertisedCount.attributes>;
  private readonly streamsCache = [new Map<string, KnownStream>(), new Map<string, KnownStream>()] as const;
  private readonly identity = new StreamIdentity();
  private sinceYield = 0;

  constructor(
    private readonly config: NormaliseMetricsConfig,
    private readonly next: MetricsConsumer<MetricsBatch>,
  ) {
    this.values = new ContractValues(config.maxAttributeLength);
    this.requests = new AttributeReader(METRICS.requests.name, METRICS.requests.attributes, this.values);
    this.extensions = new AttributeReader(METRICS.extensionRequests.name, METRICS.extensionRequests.attributes, this.values);
    this.advertisedAttributes = new AttributeReader(METRICS.advertised.name, METRICS.advertised.attributes, this.values);
    this.countAttributes = new AttributeReader(METRICS.advertisedCount.name, METRICS.advertisedCount.attributes, this.values);
  }

  /**
   * Not an async function itself: V8 keeps an async function's parameters reachable until it returns, and the
   * decoded request, a large tree of objects, would then be copied by every scavenge while the store applies the
   * batch (round trips long on PostgreSQL). The batch keeps nothing of it either (see {@link counter}).
   */
  consumeMetrics(request: ExportMetricsServiceRequest): Promise<MetricsOutcome> {
    return this.normalised(request).then((batch) => this.handOn(batch));
  }

  private async normalised(request: ExportMetricsServiceRequest): Promise<MetricsBatch> {
    const steps = this.normalise(request);
    let step = steps.next();
    while (step.done !== true) {
      await yieldToEventLoop();
      step = steps.next();
    }
    return step.value;
  }

  private async handOn(batch: MetricsBatch): Promise<MetricsOutcome> {
    const outcome = await this.next.consumeMetrics(batch);
    const rejections = [...batch.rejections];
    for (const item of outcome.rejections) addRejected(rejections, item.reason, item.service, item.points);
    const reasons = [batch.rejectedReason, outcome.rejectedReason].filter((reason) => reason !== undefined);
    return { ...outcome, ignored: batch.ignored, rejections, rejectedReason: reasons.length === 0 ? undefined : reasons.join('; ') };
  }

  /** In steps of about {@link NORMALISE_STEP_POINTS} data points; the last returns the batch. */
  private *normalise(request: ExportMetricsServiceRequest): Generator<void, MetricsBatch, void> {
    const batch: MetricsBatch = { resources: [], ignored: new Map(), rejections: [], rejectedReason: undefined };
    const window: PointWindow = { now: this.config.clock(), maxFutureSkewMs: this.config.maxFutureSkewMs, dedupWindowMs: this.config.dedupWindowMs };
    const context = new PointContext(window, batch);
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
      context.service = resourceBatch.resource.service;
      let ours = false;
      for (const sm of rm.scopeMetrics ?? []) {
        const scopeKey = `${JSON.stringify(sm.scope?.name ?? '')}${JSON.stringify(sm.scope?.version ?? '')}`;
        for (const metric of sm.metrics ?? []) {
          ours = (yield* this.metric(metric, `${resourceBatch.resource.key}\u0000${scopeKey}`, resourceBatch, context, where)) || ours;
        }
      }
      if (ours) batch.resources.push(resourceBatch);
    }
    return batch;
  }

  /** Returns whether the metric belongs to the extscope contract. */
  private *metric(metric: Metric, scopeKey: string, out: ResourceBatch, context: PointContext, where: string): Generator<void, boolean, void> {
    const name = metric.name ?? '';
    if (name === METRICS.requests.name || name === METRICS.extensionRequests.name) {
      const sum = metric.sum;
      const temporality = sum?.aggregationTemporality;
      if (!sum || sum.isMonotonic !== true || (temporality !== Temporality.Delta && temporality !== Temporality.Cumulative)) {
        context.ignore('unsupported_type', countPoints(metric));
        return true;
      }
      const kind = name === METRICS.requests.name ? SeriesKind.Requests : SeriesKind.Extension;
      if (temporality === Temporality.Cumulative && out.resource.instanceId === null) {
        // Two processes of a service that say nothing of who they are would be one stream: their totals would be
        // taken for resets of each other and mis-counted both ways (processor/sender-identity.ts). Refused point by
        // point; delta points are fine.
        context.reject('no_instance_identity', countPoints(metric), CUMULATIVE_WITHOUT_IDENTITY);
        return true;
      }
      // A derived instance (host and pid) tells the lives of one pid apart only by the points' start times.
      const needsStart = temporality === Temporality.Cumulative && out.resource.instanceDerived;
      const metricKey = `${scopeKey}${name}\u0000${temporality}`;
      for (const point of sum.dataPoints ?? []) {
        if (++this.sinceYield >= NORMALISE_STEP_POINTS) {
          this.sinceYield = 0;
          yield;
        }
        const counter = this.counter(point, kind, temporality, needsStart, metricKey, context, `${where} ${name}`);
        if (counter !== undefined) out.counters.push(counter);
      }
      return true;
    }
    if (name === METRICS.advertised.name || name === METRICS.advertisedCount.name) {
      const points = metric.gauge?.dataPoints ?? metric.sum?.dataPoints;
      if (points === null || points === undefined) {
        context.ignore('unsupported_type', countPoints(metric));
        return true;
      }
      for (const point of points) {
        if (name === METRICS.advertised.name) {
          const advertised = this.advertised(point, context, `${where} ${name}`);
          if (advertised !== undefined) out.advertised.push(advertised);
        } else {
          const count = this.advertisedCount(point, context, `${where} ${name}`);
          if (count !== undefined) out.advertisedCounts.push(count);
        }
      }
      return true;
    }
    if (name === METRICS.processEnded.name) {
      // Any point says it: the export is the sender's last (its value carries nothing more). Its time tells a
      // periodic export that arrives after it from a process started again (store/common/ending-rule.ts).
      for (const point of metric.gauge?.dataPoints ?? metric.sum?.dataPoints ?? []) {
        const timeMs = nanosToMs(context.time(point, `${where} ${name}`));
        out.endedMs = Math.max(out.endedMs ?? timeMs, timeMs);
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
    needsStart: boolean,
    metricKey: string,
    context: PointContext,
    where: string,
  ): CounterPoint | undefined {
    if (context.noValue(point)) return undefined;
    const timeNs = context.time(point, where);
    const startNs = unsignedNanos(point.startTimeUnixNano) ?? 0n;
    if (startNs < 0n || startNs > timeNs) throw new PermanentError(`${where}: start_time_unix_nano is after time_unix_nano`, 'bad_timestamp');
    const value = countValue(point, where);
    if (value === undefined) {
      context.ignore('no_recorded_value', 1);
      return undefined;
    }
    if (context.tooOld(timeNs)) return undefined;
    if (needsStart && startNs === 0n) {
      context.reject('no_start_time', 1, CUMULATIVE_WITHOUT_START);
      return undefined;
    }

    const attributes = point.attributes ?? [];
    // By name, with typed values: the same attributes in any order are the same stream, "1" and 1 are not.
    const streamAttributes = this.identity.of(attributes);
    const cache = this.streamsCache[kind];
    let known = cache.get(streamAttributes);
    if (known === undefined) {
      // The same canonical attributes validate the same way (and make the same schema-1 key): only a stream not
      // seen yet is read and checked.
      const dims = kind === SeriesKind.Requests ? this.requestDims(attributes, where) : this.extensionDims(attributes, where);
      known = { dims, schema1Attributes: schema1StreamAttributes(attributes) };
      if (cache.size >= STREAMS_CACHE_SIZE) cache.clear();
      cache.set(streamAttributes, known);
    }
    if (temporality === Temporality.Delta) context.deltaIncrement(metricKey, streamAttributes, timeNs, value, where);
    return { dims: known.dims, streamScope: metricKey, streamAttributes, schema1Attributes: known.schema1Attributes, temporality, startNs, timeNs, value };
  }

  private requestDims(attributes: NonNullable<NumberDataPoint['attributes']>, where: string): SeriesDims {
    // Extension attributes on a request point are type-checked too, and not kept.
    const read = this.extensions.typed(attributes, where);
    this.requests.check(read, where);
    return { kind: SeriesKind.Requests, ...read, extensionId: null, clientDeclared: null, serverDeclared: null, negotiated: null, required: null };
  }

  private extensionDims(attributes: NonNullable<NumberDataPoint['attributes']>, where: string): SeriesDims {
    const read = this.extensions.read(attributes, where);
    const clientDeclared = read.clientDeclared as boolean;
    const serverDeclared = read.serverDeclared as boolean;
    if (read.negotiated === true && !(clientDeclared && serverDeclared)) {
      throw new PermanentError(`${where}: ${ATTR_EXTENSION_NEGOTIATED} is true but the id was not declared by both sides`, 'bad_attribute');
    }
    const extensionId = this.values.extensionId(read.extensionId as string);
    // Derived when absent; never under an id nobody can name (the `_invalid` bucket).
    const negotiated = (read.negotiated ?? true) && isNegotiated(extensionId, clientDeclared, serverDeclared);
    return { kind: SeriesKind.Extension, ...read, extensionId, clientDeclared, serverDeclared, negotiated, required: read.required ?? false };
  }

  private advertised(point: NumberDataPoint, context: PointContext, where: string): AdvertisedPoint | undefined {
    if (context.noValue(point)) return undefined;
    const timeNs = context.time(point, where);
    const value = gaugeValue(point, where);
    if (context.tooOld(timeNs)) return undefined;
    if (value === undefined || value <= 0) {
      context.ignore('not_advertised', 1);
      return undefined;
    }
    const read = this.advertisedAttributes.read(point.attributes ?? [], where);
    return {
      serverName: read.serverName,
      serverVersion: read.serverVersion,
      extensionId: this.values.extensionId(read.extensionId as string),
      fingerprint: read.fingerprint,
      timeMs: nanosToMs(timeNs),
    };
  }

  private advertisedCount(point: NumberDataPoint, context: PointContext, where: string): AdvertisedCount | undefined {
    if (context.noValue(point)) return undefined;
    const timeNs = context.time(point, where);
    const count = countValue(point, where);
    if (count === undefined) {
      context.ignore('no_recorded_value', 1);
      return undefined;
    }
    if (context.tooOld(timeNs)) return undefined;
    const read = this.countAttributes.read(point.attributes ?? [], where);
    return { serverName: read.serverName, serverVersion: read.serverVersion, count, timeMs: nanosToMs(timeNs) };
  }
}
