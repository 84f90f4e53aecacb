import { ERA, type Era, MISSING_REQUIRED_CLIENT_CAPABILITY, OUTCOME } from '../../contract/index.js';
import type { MessageExtra } from '../internal-types.js';
import {
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_PROTOCOL_VERSION,
  META_TRACEPARENT,
  METHOD_INITIALIZE,
  METHOD_PROMPTS_GET,
  METHOD_RESOURCES_READ,
  METHOD_RESOURCES_SUBSCRIBE,
  METHOD_RESOURCES_UNSUBSCRIBE,
  HEADER_PROTOCOL_VERSION,
  METHOD_TOOLS_CALL,
  NOTIFICATION_CANCELLED,
} from '../mcp-protocol.js';
import {
  type DeclarationMemo,
  type DeclaredExtensions,
  type ExtensionMapLimits,
  UNKNOWN_DECLARATION,
  readDeclaredExtensions,
  readRequiredExtensionIds,
} from './extension-map.js';
import { asRecord, asString } from './untrusted.js';

/** JSON-RPC ids are strings or numbers, unique only per transport. */
export type RequestId = string | number;

export interface JsonRpcRequest {
  jsonrpc?: unknown;
  id: RequestId;
  method: string;
  params?: unknown;
}

/** What a 2025-era `initialize` on one server instance declared; later legacy requests on it inherit this. */
export interface LegacyHandshake {
  client: DeclaredExtensions;
  clientName?: string;
  clientVersion?: string;
  protocolVersion?: string;
}

/** The `initialize` one server object saw last (one slot per server object, shared by its connections). */
export interface HandshakeSlot {
  handshake: LegacyHandshake | undefined;
}

/** What a request targets, after the MCP semantic conventions. */
export type TargetKind = 'tool' | 'prompt' | 'resource';

/**
 * Everything read from one inbound request, before its answer: its `params` and `_meta` envelope are read once,
 * here. All strings are untrusted client input. A fixed shape (every field always set) keeps it cheap.
 */
export interface RequestFacts {
  method: string;
  id: RequestId;
  era: Era;
  protocolVersion: string | undefined;
  clientName: string | undefined;
  clientVersion: string | undefined;
  client: DeclaredExtensions;
  /** The tool or prompt name, or the resource URI (read only when a span is made). */
  target: string | undefined;
  targetKind: TargetKind | undefined;
  /** `params._meta` when it carries a `traceparent`: where the span's parent trace context is read from. */
  traceCarrier: Record<string, unknown> | undefined;
}

/** How requests are read: the same for every request of a connection, so it is built once. */
export interface RequestReading {
  limits: ExtensionMapLimits;
  /** Shared by every reading of one pipeline (see {@link DeclarationMemo}). */
  declarations: DeclarationMemo;
  /** Also read what only a span uses (target, trace-context carrier). */
  spanDetails: boolean;
  /**
   * The protocol version of a legacy request whose instance saw no `initialize`, from what the transport passed
   * with the message (e.g. an HTTP header). Called only for those requests.
   */
  protocolVersionHint?: (extra: unknown) => string | undefined;
}

/**
 * The `MCP-Protocol-Version` header an HTTP transport passed with the message (`extra`), if any: the hint a
 * pipeline reads with, for every connection alike.
 */
export function protocolVersionHeader(extra: unknown): string | undefined {
  if (typeof extra !== 'object' || extra === null) return undefined;
  const { request, requestInfo } = extra as MessageExtra;
  const webHeaders = request?.headers;
  if (typeof webHeaders?.get === 'function') return webHeaders.get(HEADER_PROTOCOL_VERSION) ?? undefined;
  const value = requestInfo?.headers?.[HEADER_PROTOCOL_VERSION];
  return typeof value === 'string' ? value : undefined;
}

export interface Outcome {
  outcome: string;
  errorCode?: number;
  errorMessage?: string;
  /** For -32021: the extension ids the server said it requires. */
  required?: DeclaredExtensions;
  /** For `initialize`: the version the server answered with. */
  protocolVersion?: string;
}

export function isRequest(message: unknown): message is JsonRpcRequest {
  const record = asRecord(message);
  if (record === undefined || typeof record['method'] !== 'string') return false;
  const id = record['id'];
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
}

/**
 * Reads one inbound request. A request carrying the 2026-07-28 envelope (`_meta` with a protocol version) is
 * `modern` and its declaration is its own `clientCapabilities`, nothing else. Anything else is `legacy`: an
 * `initialize` declares for itself; a later request inherits the `initialize` seen on the same server
 * instance (`legacy`, read only then), or is `unknown` when that instance never saw one.
 *
 * This runs for every request: it builds one object of a fixed shape and no intermediate ones.
 */
export function readRequest(message: JsonRpcRequest, legacy: HandshakeSlot | undefined, reading: RequestReading, extra?: unknown): RequestFacts {
  const params = asRecord(message.params);
  const meta = params === undefined ? undefined : asRecord(params['_meta']);
  const facts: RequestFacts = {
    method: message.method,
    id: message.id,
    era: ERA.legacy,
    protocolVersion: undefined,
    clientName: undefined,
    clientVersion: undefined,
    client: UNKNOWN_DECLARATION,
    target: undefined,
    targetKind: undefined,
    traceCarrier: undefined,
  };
  const envelopeVersion = meta === undefined ? undefined : asString(meta[META_PROTOCOL_VERSION]);
  if (envelopeVersion !== undefined) {
    facts.era = ERA.modern;
    facts.protocolVersion = envelopeVersion;
    readClientInfo(facts, meta![META_CLIENT_INFO]);
    facts.client = readDeclaredExtensions(meta![META_CLIENT_CAPABILITIES], reading.limits, reading.declarations);
  } else if (message.method === METHOD_INITIALIZE) {
    facts.protocolVersion = asString(params?.['protocolVersion']);
    readClientInfo(facts, params?.['clientInfo']);
    facts.client = readDeclaredExtensions(params?.['capabilities'], reading.limits, reading.declarations);
  } else {
    readInherited(facts, legacy?.handshake, reading, extra);
  }
  if (reading.spanDetails && params !== undefined) {
    readTarget(facts, params);
    if (meta !== undefined && typeof meta[META_TRACEPARENT] === 'string') facts.traceCarrier = meta;
  }
  return facts;
}

/** A legacy request after the handshake: what the instance's `initialize` declared, if it saw one. */
function readInherited(facts: RequestFacts, handshake: LegacyHandshake | undefined, reading: RequestReading, extra: unknown): void {
  if (handshake === undefined) {
    facts.protocolVersion = reading.protocolVersionHint?.(extra);
    return;
  }
  facts.protocolVersion = handshake.protocolVersion ?? reading.protocolVersionHint?.(extra);
  facts.clientName = handshake.clientName;
  facts.clientVersion = handshake.clientVersion;
  facts.client = handshake.client;
}

function readClientInfo(facts: RequestFacts, value: unknown): void {
  const info = asRecord(value);
  if (info === undefined) return;
  facts.clientName = asString(info['name']);
  facts.clientVersion = asString(info['version']);
}

function readTarget(facts: RequestFacts, params: Record<string, unknown>): void {
  switch (facts.method) {
    case METHOD_TOOLS_CALL:
      facts.target = asString(params['name']);
      facts.targetKind = facts.target === undefined ? undefined : 'tool';
      return;
    case METHOD_PROMPTS_GET:
      facts.target = asString(params['name']);
      facts.targetKind = facts.target === undefined ? undefined : 'prompt';
      return;
    case METHOD_RESOURCES_READ:
    case METHOD_RESOURCES_SUBSCRIBE:
    case METHOD_RESOURCES_UNSUBSCRIBE:
      facts.target = asString(params['uri']);
      facts.targetKind = facts.target === undefined ? undefined : 'resource';
      return;
  }
}

/** The answers most requests get, shared (an outcome is never modified). */
const SIMPLE_OUTCOMES: Readonly<Record<string, Outcome>> = Object.freeze(
  Object.fromEntries(Object.values(OUTCOME).map((outcome) => [outcome, Object.freeze({ outcome })])),
);

/** Classifies the answer to a request: a JSON-RPC error, a tool error, or the result's type. */
export function readOutcome(response: Record<string, unknown>, limits: ExtensionMapLimits): Outcome {
  const error = asRecord(response['error']);
  if (error !== undefined) {
    const code = typeof error['code'] === 'number' ? error['code'] : Number.NaN;
    return {
      outcome: OUTCOME.error,
      errorCode: code,
      errorMessage: asString(error['message']),
      ...(code === MISSING_REQUIRED_CLIENT_CAPABILITY && { required: readRequiredExtensionIds(error['data'], limits) }),
    };
  }
  const result = asRecord(response['result']);
  if (result === undefined) return SIMPLE_OUTCOMES[OUTCOME.complete]!;
  if (result['isError'] === true) return SIMPLE_OUTCOMES[OUTCOME.toolError]!;
  const resultType = asString(result['resultType']);
  if (resultType !== undefined) return (Object.hasOwn(SIMPLE_OUTCOMES, resultType) ? SIMPLE_OUTCOMES[resultType] : undefined) ?? { outcome: resultType };
  if (asRecord(result['task']) !== undefined) return SIMPLE_OUTCOMES[OUTCOME.task]!;
  const protocolVersion = asString(result['protocolVersion']);
  return protocolVersion === undefined ? SIMPLE_OUTCOMES[OUTCOME.complete]! : { outcome: OUTCOME.complete, protocolVersion };
}

/** An outcome with no answer: the request was cancelled, or its connection closed first. */
export const CANCELLED: Outcome = SIMPLE_OUTCOMES[OUTCOME.cancelled]!;

export function isResponse(message: unknown): message is Record<string, unknown> & { id: RequestId } {
  const record = asRecord(message);
  if (record === undefined || !('result' in record || 'error' in record)) return false;
  const id = record['id'];
  return typeof id === 'string' || typeof id === 'number';
}

/** `notifications/cancelled` → the request id it cancels. */
export function cancelledRequestId(message: unknown): RequestId | undefined {
  const record = asRecord(message);
  if (record === undefined || record['method'] !== NOTIFICATION_CANCELLED || 'id' in record) return undefined;
  const id = asRecord(record['params'])?.['requestId'];
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/**
 * A request's facts once it is answered: the revision the answer settled on (an `initialize` result's), and a
 * completed 2025-era `initialize` kept in the handshake slot for the legacy requests that follow it.
 */
export function answeredFacts(facts: RequestFacts, outcome: Outcome, slot: HandshakeSlot): RequestFacts {
  const answered = outcome.protocolVersion === undefined ? facts : { ...facts, protocolVersion: outcome.protocolVersion };
  if (answered.method === METHOD_INITIALIZE && answered.era === ERA.legacy && outcome.outcome === OUTCOME.complete) {
    slot.handshake = {
      client: answered.client,
      clientName: answered.clientName,
      clientVersion: answered.clientVersion,
      protocolVersion: answered.protocolVersion,
    };
  }
  return answered;
}
