import {
  type Attributes,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type Tracer,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import {
  ATTR_CLIENT_DECLARATION,
  ATTR_CLIENT_EXTENSIONS,
  ATTR_CLIENT_EXTENSION_FINGERPRINTS,
  ATTR_CLIENT_EXTENSION_SETTINGS,
  ATTR_CLIENT_NAME,
  ATTR_CLIENT_VERSION,
  ATTR_DROPPED_EXTENSION_COUNT,
  ATTR_ERA,
  ATTR_INVALID_EXTENSION_COUNT,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_NEGOTIATED_EXTENSIONS,
  ATTR_OUTCOME,
  ATTR_REQUIRED_EXTENSIONS,
  ATTR_RPC_RESPONSE_STATUS_CODE,
  ATTR_SERVER_EXTENSIONS,
  ATTR_SERVER_EXTENSION_FINGERPRINTS,
  OUTCOME,
  intersect,
} from '../../contract/index.js';
import { METHOD_TOOLS_CALL } from '../mcp-protocol.js';
import { fingerprint } from '../observe/extension-map.js';
import type { StartedRequest } from '../observe/pairing.js';
import type { Outcome, RequestFacts, TargetKind } from '../observe/request-facts.js';
import type { ServerAdvertisement } from '../observe/server-advertisement.js';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_RESOURCE_URI,
  ATTR_MCP_SESSION_ID,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from '../semconv.js';
import { capLength } from './value-guard.js';

/** Raw settings exported on spans (only when captured) are cut at this length. */
const MAX_SETTINGS_LENGTH = 1024;

const TARGET_ATTRIBUTE: Readonly<Record<TargetKind, string>> = {
  tool: ATTR_GEN_AI_TOOL_NAME,
  prompt: ATTR_GEN_AI_PROMPT_NAME,
  resource: ATTR_MCP_RESOURCE_URI,
};

const META_GETTER: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'string' ? value : undefined;
  },
};

/**
 * The SERVER span of one MCP request, after the OTel MCP semantic conventions: named `{method} {tool or prompt}`,
 * the client's trace context in `params._meta` is the parent, and the ambient (e.g. HTTP) span becomes a link.
 */
export function startRequestSpan(tracer: Tracer, facts: RequestFacts, startTime?: number): StartedRequest {
  const ambient = context.active();
  let parent = ambient;
  let links: Link[] | undefined;
  if (facts.traceCarrier !== undefined) {
    const extracted = propagation.extract(ROOT_CONTEXT, facts.traceCarrier, META_GETTER);
    if (trace.getSpanContext(extracted) !== undefined) {
      parent = extracted;
      const ambientSpan = trace.getSpanContext(ambient);
      if (ambientSpan !== undefined) links = [{ context: ambientSpan }];
    }
  }
  const method = capLength(facts.method);
  const attributes: Attributes = { [ATTR_MCP_METHOD_NAME]: method, [ATTR_JSONRPC_REQUEST_ID]: capLength(String(facts.id)) };
  const target = facts.target === undefined ? undefined : capLength(facts.target);
  if (target !== undefined && facts.targetKind !== undefined) attributes[TARGET_ATTRIBUTE[facts.targetKind]] = target;
  if (facts.method === METHOD_TOOLS_CALL) attributes[ATTR_GEN_AI_OPERATION_NAME] = GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL;
  // Resource URIs are high-cardinality: they stay out of the span name, as the conventions ask.
  const named = target !== undefined && facts.targetKind !== 'resource';
  const span = tracer.startSpan(
    named ? `${method} ${target}` : method,
    {
      kind: SpanKind.SERVER,
      attributes,
      ...(links !== undefined && { links }),
      ...(startTime !== undefined && { startTime }),
    },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/** What a finished request's span gets: its declarations, what was negotiated, and the outcome. */
export function finishRequestSpan(
  span: Span,
  facts: RequestFacts,
  server: ServerAdvertisement | undefined,
  outcome: Outcome,
  sessionId: string | undefined,
  captureSettings: boolean,
): void {
  if (!span.isRecording()) {
    span.end();
    return;
  }
  const attributes: Attributes = {
    [ATTR_ERA]: facts.era,
    [ATTR_CLIENT_DECLARATION]: facts.client.declaration,
    [ATTR_OUTCOME]: capLength(outcome.outcome),
    [ATTR_CLIENT_EXTENSIONS]: facts.client.ids,
    [ATTR_CLIENT_EXTENSION_FINGERPRINTS]: facts.client.settings.map((settings) => fingerprint(settings)),
  };
  const set = (name: string, value: string | undefined): void => {
    if (value !== undefined) attributes[name] = capLength(value);
  };
  set(ATTR_MCP_PROTOCOL_VERSION, outcome.protocolVersion ?? facts.protocolVersion);
  set(ATTR_MCP_SESSION_ID, sessionId);
  set(ATTR_CLIENT_NAME, facts.clientName);
  set(ATTR_CLIENT_VERSION, facts.clientVersion);
  if (captureSettings) {
    attributes[ATTR_CLIENT_EXTENSION_SETTINGS] = facts.client.settings.map((settings) => capLength(JSON.stringify(settings) ?? 'null', MAX_SETTINGS_LENGTH));
  }
  if (server !== undefined) {
    attributes[ATTR_SERVER_EXTENSIONS] = server.extensions.ids;
    attributes[ATTR_SERVER_EXTENSION_FINGERPRINTS] = server.fingerprints as string[];
    attributes[ATTR_NEGOTIATED_EXTENSIONS] = intersect(facts.client.ids, server.ids);
  }
  if (outcome.required !== undefined) attributes[ATTR_REQUIRED_EXTENSIONS] = outcome.required.ids;
  if (facts.client.invalid > 0) attributes[ATTR_INVALID_EXTENSION_COUNT] = facts.client.invalid;
  if (facts.client.dropped > 0) attributes[ATTR_DROPPED_EXTENSION_COUNT] = facts.client.dropped;
  if (outcome.errorCode !== undefined) {
    const code = String(outcome.errorCode);
    attributes[ATTR_ERROR_TYPE] = code;
    attributes[ATTR_RPC_RESPONSE_STATUS_CODE] = code;
    span.setStatus({ code: SpanStatusCode.ERROR, message: capLength(outcome.errorMessage ?? code) });
  } else if (outcome.outcome === OUTCOME.toolError) {
    attributes[ATTR_ERROR_TYPE] = OUTCOME.toolError;
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.setAttributes(attributes);
  span.end();
}
