import {
  type Attributes,
  type Context,
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
import { fingerprint } from './extension-map.js';
import type { RequestRecord } from './recorder.js';
import type { RequestFacts } from './request-facts.js';
import {
  ATTR_CLIENT_DECLARATION,
  ATTR_CLIENT_EXTENSIONS,
  ATTR_CLIENT_EXTENSION_FINGERPRINTS,
  ATTR_CLIENT_EXTENSION_SETTINGS,
  ATTR_CLIENT_NAME,
  ATTR_CLIENT_VERSION,
  ATTR_DROPPED_EXTENSION_COUNT,
  ATTR_ERA,
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROMPT_NAME,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_INVALID_EXTENSION_COUNT,
  ATTR_JSONRPC_REQUEST_ID,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_MCP_RESOURCE_URI,
  ATTR_MCP_SESSION_ID,
  ATTR_NEGOTIATED_EXTENSIONS,
  ATTR_OUTCOME,
  ATTR_REQUIRED_EXTENSIONS,
  ATTR_RPC_RESPONSE_STATUS_CODE,
  ATTR_SERVER_EXTENSIONS,
  ATTR_SERVER_EXTENSION_FINGERPRINTS,
  OUTCOME,
} from './semconv.js';
import { capLength } from './value-guard.js';

const MAX_NAME_LENGTH = 256;
const MAX_SETTINGS_LENGTH = 1024;

const META_GETTER: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'string' ? value : undefined;
  },
};

/**
 * The SERVER span of one MCP request, after the OTel MCP semantic conventions: the client's trace context in
 * `params._meta` is the parent, and the ambient (e.g. HTTP) span becomes a link.
 */
export function startRequestSpan(tracer: Tracer, facts: RequestFacts, startTime?: number): { span: Span; context: Context } {
  const ambient = context.active();
  let parent = ambient;
  let links: Link[] | undefined;
  if (facts.meta !== undefined && typeof facts.meta['traceparent'] === 'string') {
    const extracted = propagation.extract(ROOT_CONTEXT, facts.meta, META_GETTER);
    if (trace.getSpanContext(extracted) !== undefined) {
      parent = extracted;
      const ambientSpan = trace.getSpanContext(ambient);
      if (ambientSpan !== undefined) links = [{ context: ambientSpan }];
    }
  }
  const method = capLength(facts.method, MAX_NAME_LENGTH);
  const named = facts.targetKind === 'tool' || facts.targetKind === 'prompt';
  const name = named && facts.target !== undefined ? `${method} ${capLength(facts.target, MAX_NAME_LENGTH)}` : method;
  const span = tracer.startSpan(
    name,
    {
      kind: SpanKind.SERVER,
      attributes: { [ATTR_MCP_METHOD_NAME]: method, [ATTR_JSONRPC_REQUEST_ID]: capLength(String(facts.id), MAX_NAME_LENGTH) },
      ...(links !== undefined && { links }),
      ...(startTime !== undefined && { startTime }),
    },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

export function finishRequestSpan(span: Span, record: RequestRecord, sessionId: string | undefined, captureSettings: boolean): void {
  if (!span.isRecording()) {
    span.end();
    return;
  }
  const { facts, server, outcome } = record;
  const attributes: Attributes = {
    [ATTR_ERA]: facts.era,
    [ATTR_CLIENT_DECLARATION]: facts.client.declaration,
    [ATTR_OUTCOME]: capLength(outcome.outcome, MAX_NAME_LENGTH),
    [ATTR_CLIENT_EXTENSIONS]: facts.client.ids,
    [ATTR_CLIENT_EXTENSION_FINGERPRINTS]: facts.client.settings.map((settings) => fingerprint(settings)),
  };
  const set = (name: string, value: string | undefined): void => {
    if (value !== undefined) attributes[name] = capLength(value, MAX_NAME_LENGTH);
  };
  set(ATTR_MCP_PROTOCOL_VERSION, outcome.protocolVersion ?? facts.protocolVersion);
  set(ATTR_MCP_SESSION_ID, sessionId);
  set(ATTR_CLIENT_NAME, facts.clientName);
  set(ATTR_CLIENT_VERSION, facts.clientVersion);
  if (facts.targetKind === 'tool') {
    set(ATTR_GEN_AI_TOOL_NAME, facts.target);
    attributes[ATTR_GEN_AI_OPERATION_NAME] = 'execute_tool';
  } else if (facts.targetKind === 'prompt') set(ATTR_GEN_AI_PROMPT_NAME, facts.target);
  else if (facts.targetKind === 'resource') set(ATTR_MCP_RESOURCE_URI, facts.target);
  if (captureSettings) {
    attributes[ATTR_CLIENT_EXTENSION_SETTINGS] = facts.client.settings.map((settings) =>
      capLength(JSON.stringify(settings) ?? 'null', MAX_SETTINGS_LENGTH),
    );
  }
  if (server !== undefined) {
    attributes[ATTR_SERVER_EXTENSIONS] = server.extensions.ids;
    attributes[ATTR_SERVER_EXTENSION_FINGERPRINTS] = server.fingerprints as string[];
    attributes[ATTR_NEGOTIATED_EXTENSIONS] = facts.client.ids.filter((id) => server.ids.has(id));
  }
  if (outcome.required !== undefined) attributes[ATTR_REQUIRED_EXTENSIONS] = outcome.required.ids;
  if (facts.client.invalid > 0) attributes[ATTR_INVALID_EXTENSION_COUNT] = facts.client.invalid;
  if (facts.client.dropped > 0) attributes[ATTR_DROPPED_EXTENSION_COUNT] = facts.client.dropped;
  if (outcome.errorCode !== undefined) {
    const code = String(outcome.errorCode);
    attributes[ATTR_ERROR_TYPE] = code;
    attributes[ATTR_RPC_RESPONSE_STATUS_CODE] = code;
    span.setStatus({ code: SpanStatusCode.ERROR, message: capLength(outcome.errorMessage ?? code, MAX_NAME_LENGTH) });
  } else if (outcome.outcome === OUTCOME.toolError) {
    attributes[ATTR_ERROR_TYPE] = OUTCOME.toolError;
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.setAttributes(attributes);
  span.end();
}
