import { createRequire } from 'node:module';
import { type Client, Metadata, type ServiceError, credentials, makeGenericClientConstructor, status } from '@grpc/grpc-js';
import { RETRY_INFO_TYPE_URL } from '../../../../collector/otlp/proto-root.js';

export const METRICS_EXPORT = '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export';
export const TRACES_EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';

export interface RawAnswer {
  code: status;
  details: string;
  /** The response message, on OK. */
  response?: Buffer;
  metadata?: Metadata;
}

const bytes = (value: Buffer): Buffer => value;

type UnaryCall = (message: Buffer, metadata: Metadata, options: object, callback: (error: ServiceError | null, response?: Buffer) => void) => void;

/** A plain grpc-js client sending raw bytes to any path: for input no OpenTelemetry exporter would send. */
export function rawClient(
  address: string,
  path: string,
  options: Record<string, unknown> = {},
): { call(message: Buffer, metadata?: Metadata): Promise<RawAnswer>; close(): void } {
  const Constructor = makeGenericClientConstructor(
    {
      Export: {
        path,
        requestStream: false,
        responseStream: false,
        requestSerialize: bytes,
        requestDeserialize: bytes,
        responseSerialize: bytes,
        responseDeserialize: bytes,
      },
    },
    'Raw',
  );
  const client = new Constructor(address, credentials.createInsecure(), options) as unknown as Client & { Export: UnaryCall };
  return {
    call: (message, metadata = new Metadata()) =>
      new Promise<RawAnswer>((resolve) => {
        client.Export(message, metadata, { deadline: Date.now() + 30_000 }, (error, response) => {
          if (error === null) resolve({ code: status.OK, details: '', response });
          else resolve({ code: error.code, details: error.details, metadata: error.metadata });
        });
      }),
    close: () => client.close(),
  };
}

export function bearer(token: string): Metadata {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  return metadata;
}

interface Decoded {
  details?: { type_url: string; value: Uint8Array }[];
  retry_delay?: { seconds: number | string };
}

interface MessageType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: object): Decoded;
}

// google.rpc.Status, google.protobuf.Any, google.rpc.RetryInfo and google.protobuf.Duration as protobufjs reflection
// types (the field numbers of googleapis' status.proto / error_details.proto), independent of the collector's encoder.
const requireHere = createRequire(import.meta.url);
const protobuf = requireHere('protobufjs') as { Root: { fromJSON(json: object): { lookupType(name: string): MessageType } } };
const root = protobuf.Root.fromJSON({
  nested: {
    Any: { fields: { type_url: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } },
    Status: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 }, details: { rule: 'repeated', type: 'Any', id: 3 } } },
    Duration: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
    RetryInfo: { fields: { retry_delay: { type: 'Duration', id: 1 } } },
  },
});
const decode = (type: string, bytes: Uint8Array): Decoded => {
  const messageType = root.lookupType(type);
  return messageType.toObject(messageType.decode(bytes), { longs: Number, defaults: false });
};

/** The RetryInfo delay (seconds) in a status's `grpc-status-details-bin`, or undefined without one. */
export function retryDelaySeconds(metadata: Metadata | undefined): number | undefined {
  const raw = metadata?.get('grpc-status-details-bin')[0];
  if (!Buffer.isBuffer(raw)) return undefined;
  const detail = decode('Status', raw).details?.find((any) => any.type_url === RETRY_INFO_TYPE_URL);
  if (detail === undefined) return undefined;
  return Number(decode('RetryInfo', detail.value).retry_delay?.seconds ?? 0);
}
