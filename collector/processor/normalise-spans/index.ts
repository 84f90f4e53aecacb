import {
  ATTR_CLIENT_DECLARATION,
  ATTR_CLIENT_EXTENSIONS,
  ATTR_CLIENT_NAME,
  ATTR_CLIENT_VERSION,
  ATTR_MCP_METHOD_NAME,
  ATTR_NEGOTIATED_EXTENSIONS,
  ATTR_OUTCOME,
  ATTR_REQUIRED_EXTENSIONS,
  ATTR_RPC_RESPONSE_STATUS_CODE,
  ATTR_SERVER_EXTENSIONS,
  MAX_IDS_PER_REQUEST,
} from '../../../contract/index.js';
import type { SpanBatch, SpanExample } from '../../model/batches.js';
import type { TracesConsumer, TracesOutcome } from '../../model/consumer.js';
import { PermanentError } from '../../model/errors.js';
import { msToNanos, nanosToMs } from '../../model/time.js';
import { type AnyValue, type ExportTraceServiceRequest, SPAN_KIND_SERVER, type Span } from '../../otlp/messages.js';
import { scalarString, stringArray, unsignedNanos } from '../../otlp/values.js';
import { ContractValues } from '../contract-values.js';

export interface NormaliseSpansConfig {
  maxAttributeLength: number;
  maxFutureSkewMs: number;
  /** Spans looked at per export (the rest are skipped and counted): examples are samples, not counts. */
  maxSpansPerExport: number;
  clock: () => number;
}

/**
 * OTLP spans → example requests. Spans are samples for drill-down, so a span we cannot use is skipped
 * (counted in `ignored`), and one with an oversized string or an impossible time is refused alone (counted
 * in `rejected`, reported as partial success); only an undecodable body refuses the export.
 */
export class NormaliseSpans implements TracesConsumer<ExportTraceServiceRequest> {
  private readonly values: ContractValues;

  constructor(
    private readonly config: NormaliseSpansConfig,
    private readonly next: TracesConsumer<SpanBatch>,
  ) {
    this.values = new ContractValues(config.maxAttributeLength);
  }

  async consumeTraces(request: ExportTraceServiceRequest): Promise<TracesOutcome> {
    const batch = this.normalise(request);
    const outcome = await this.next.consumeTraces(batch);
    return {
      ...outcome,
      ignored: outcome.ignored + batch.ignored,
      rejected: outcome.rejected + batch.rejected,
      rejectedReason: batch.rejectedReason ?? outcome.rejectedReason,
    };
  }

  private normalise(request: ExportTraceServiceRequest): SpanBatch {
    const batch: SpanBatch = { examples: [], ignored: 0, rejected: 0, rejectedReason: undefined };
    const maxEndNs = msToNanos(this.config.clock() + this.config.maxFutureSkewMs);
    for (const rs of request.resourceSpans ?? []) {
      let resource: { service: string | null; instanceId: string | null } | undefined;
      try {
        resource = this.values.resource(rs.resource?.attributes ?? [], 'resource');
      } catch (error) {
        if (!(error instanceof PermanentError)) throw error;
      }
      for (const ss of rs.scopeSpans ?? []) {
        for (const span of ss.spans ?? []) {
          if (resource === undefined) {
            batch.rejected++;
            batch.rejectedReason = 'a resource attribute was too long';
            continue;
          }
          if (batch.examples.length >= this.config.maxSpansPerExport) {
            batch.ignored++;
            continue;
          }
          try {
            const example = this.example(span, resource, maxEndNs);
            if (example === undefined) batch.ignored++;
            else batch.examples.push(example);
          } catch (error) {
            if (!(error instanceof PermanentError)) throw error;
            batch.rejected++;
            batch.rejectedReason = error.message;
          }
        }
      }
    }
    return batch;
  }

  private example(span: Span, resource: { service: string | null; instanceId: string | null }, maxEndNs: bigint): SpanExample | undefined {
    if (span.kind !== SPAN_KIND_SERVER) return undefined;
    const attributes = new Map<string, AnyValue | null | undefined>();
    for (const attribute of span.attributes ?? []) attributes.set(attribute.key ?? '', attribute.value);
    const text = (key: string): string | null => {
      const value = scalarString(attributes.get(key));
      return value === undefined ? null : this.values.keep('span', key, value);
    };
    const ids = (key: string): string[] => {
      const list = stringArray(attributes.get(key)) ?? [];
      return list.slice(0, MAX_IDS_PER_REQUEST).map((id) => this.values.extensionId(this.values.keep('span', key, id)));
    };
    const method = text(ATTR_MCP_METHOD_NAME);
    if (method === null) return undefined;
    const traceId = span.traceId ? Buffer.from(span.traceId).toString('hex') : '';
    const spanId = span.spanId ? Buffer.from(span.spanId).toString('hex') : '';
    if (traceId.length !== 32 || spanId.length !== 16) throw new PermanentError('span: trace or span id has the wrong length', 'bad_span');
    const startNs = unsignedNanos(span.startTimeUnixNano) ?? 0n;
    const endNs = unsignedNanos(span.endTimeUnixNano) ?? 0n;
    if (startNs <= 0n || endNs < startNs || endNs > maxEndNs) throw new PermanentError('span: impossible start or end time', 'bad_span');
    return {
      service: resource.service,
      instanceId: resource.instanceId,
      traceId,
      spanId,
      name: this.values.keep('span', 'name', span.name ?? ''),
      method,
      outcome: text(ATTR_OUTCOME),
      statusCode: text(ATTR_RPC_RESPONSE_STATUS_CODE),
      clientName: text(ATTR_CLIENT_NAME),
      clientVersion: text(ATTR_CLIENT_VERSION),
      clientDeclaration: text(ATTR_CLIENT_DECLARATION),
      startMs: nanosToMs(startNs),
      durationMs: Number(endNs - startNs) / 1e6,
      clientExtensions: ids(ATTR_CLIENT_EXTENSIONS),
      serverExtensions: ids(ATTR_SERVER_EXTENSIONS),
      negotiated: ids(ATTR_NEGOTIATED_EXTENSIONS),
      required: ids(ATTR_REQUIRED_EXTENSIONS),
    };
  }
}
