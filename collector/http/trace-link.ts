import { ConfigError } from '../model/errors.js';

/**
 * Links from an example request to its trace in the tracing backend the user runs (Jaeger, Tempo, a vendor), from
 * one URL template: `EXTSCOPE_TRACE_URL`, e.g. `http://jaeger:16686/trace/{traceId}`. Trace and span ids come from
 * senders: only well-formed ones (lowercase hex, of OTLP's lengths, not all zeros) are put in a link, and what the
 * template makes must still be an http(s) URL.
 */

const TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;
const SPAN_ID = /^(?!0{16})[0-9a-f]{16}$/;
const PLACEHOLDER = /\{(traceId|spanId)\}/g;

const httpUrl = (text: string): string | undefined => {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
};

/** The template, checked: it names `{traceId}` and makes an http(s) URL. Throws {@link ConfigError} otherwise. */
export function checkTraceUrlTemplate(name: string, template: string): string {
  if (!template.includes('{traceId}')) throw new ConfigError(`${name} must contain {traceId}, where the trace id goes (got ${JSON.stringify(template)})`);
  if (httpUrl(template.replace(PLACEHOLDER, (_whole, which: string) => (which === 'traceId' ? '1'.repeat(32) : '1'.repeat(16)))) === undefined)
    throw new ConfigError(`${name} must be an http(s) URL with {traceId} in it, e.g. http://jaeger:16686/trace/{traceId} (got ${JSON.stringify(template)})`);
  return template;
}

/** The trace's link, or null: no template, or an id that is not a well-formed trace id. A malformed span id leaves `{spanId}` empty. */
export function traceLink(template: string | undefined, traceId: string, spanId: string): string | null {
  if (template === undefined || !TRACE_ID.test(traceId)) return null;
  const link = template.replace(PLACEHOLDER, (_whole, which: string) => (which === 'traceId' ? traceId : SPAN_ID.test(spanId) ? spanId : ''));
  return httpUrl(link) ?? null;
}
