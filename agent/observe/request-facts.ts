import {
  type DeclaredExtensions,
  type ExtensionMapLimits,
  UNKNOWN_DECLARATION,
  readDeclaredExtensions,
  readRequiredExtensionIds,
} from './extension-map.js';
import { ERA, type Era, MISSING_REQUIRED_CLIENT_CAPABILITY, OUTCOME } from '../../contract/index.js';
import { META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION } from '../mcp-protocol.js';

/** What a 2025-era `initialize` on one server instance declared; later legacy requests on it inherit this. */
export interface LegacyHandshake {
  client: DeclaredExtensions;
  clientName?: string;
  clientVersion?: string;
  protocolVersion?: string;
}

/** Everything read from one inbound request, before its answer. All strings are untrusted client input. */
export interface RequestFacts {
  method: string;
  id: string | number;
  era: Era;
  protocolVersion?: string;
  clientName?: string;
  clientVersion?: string;
  client: DeclaredExtensions;
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

export interface JsonRpcRequest {
  jsonrpc?: unknown;
  id: string | number;
  method: string;
  params?: unknown;
}

export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
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
 * instance, or is `unknown` when that instance never saw one.
 *
 * This runs for every request: it builds one object of a fixed shape and no intermediate ones.
 */
export function readRequest(
  message: JsonRpcRequest,
  legacy: LegacyHandshake | undefined,
  limits: ExtensionMapLimits,
  protocolVersionHint: (extra: unknown) => string | undefined = () => undefined,
  extra?: unknown,
): RequestFacts {
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
  };
  const envelopeVersion = meta === undefined ? undefined : asString(meta[META_PROTOCOL_VERSION]);
  if (envelopeVersion !== undefined) {
    facts.era = ERA.modern;
    facts.protocolVersion = envelopeVersion;
    readClientInfo(facts, meta![META_CLIENT_INFO]);
    facts.client = readDeclaredExtensions(meta![META_CLIENT_CAPABILITIES], limits);
  } else if (message.method === 'initialize') {
    facts.protocolVersion = asString(params?.['protocolVersion']);
    readClientInfo(facts, params?.['clientInfo']);
    facts.client = readDeclaredExtensions(params?.['capabilities'], limits);
  } else if (legacy !== undefined) {
    facts.protocolVersion = legacy.protocolVersion ?? protocolVersionHint(extra);
    facts.clientName = legacy.clientName;
    facts.clientVersion = legacy.clientVersion;
    facts.client = legacy.client;
  } else {
    facts.protocolVersion = protocolVersionHint(extra);
  }
  return facts;
}

function readClientInfo(facts: RequestFacts, value: unknown): void {
  const info = asRecord(value);
  if (info === undefined) return;
  facts.clientName = asString(info['name']);
  facts.clientVersion = asString(info['version']);
}

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
  if (result === undefined) return { outcome: OUTCOME.complete };
  if (result['isError'] === true) return { outcome: OUTCOME.toolError };
  const resultType = asString(result['resultType']);
  if (resultType !== undefined) return { outcome: resultType };
  if (asRecord(result['task']) !== undefined) return { outcome: OUTCOME.task };
  const protocolVersion = asString(result['protocolVersion']);
  return protocolVersion === undefined ? { outcome: OUTCOME.complete } : { outcome: OUTCOME.complete, protocolVersion };
}

export function isResponse(message: unknown): message is Record<string, unknown> & { id: string | number } {
  const record = asRecord(message);
  if (record === undefined || !('result' in record || 'error' in record)) return false;
  const id = record['id'];
  return typeof id === 'string' || typeof id === 'number';
}

/** `notifications/cancelled` → the request id it cancels. */
export function cancelledRequestId(message: unknown): string | number | undefined {
  const record = asRecord(message);
  if (record === undefined || record['method'] !== 'notifications/cancelled' || 'id' in record) return undefined;
  const id = asRecord(record['params'])?.['requestId'];
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}
