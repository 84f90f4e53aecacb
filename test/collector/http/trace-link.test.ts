/** The trace link template (http/trace-link.ts): checked once, and only well-formed ids become links. */
import { describe, expect, it } from 'vitest';
import { checkTraceUrlTemplate, traceLink } from '../../../collector/http/trace-link.js';
import { ConfigError } from '../../../collector/model/errors.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('the trace link template', () => {
  it('is accepted with {traceId} in an http(s) URL', () => {
    expect(checkTraceUrlTemplate('EXTSCOPE_TRACE_URL', 'http://jaeger:16686/trace/{traceId}')).toBe('http://jaeger:16686/trace/{traceId}');
    expect(checkTraceUrlTemplate('EXTSCOPE_TRACE_URL', 'https://tempo.example.com/explore?traceId={traceId}&span={spanId}')).toContain('{spanId}');
  });

  it('is refused without {traceId}, or when it makes no http(s) URL', () => {
    expect(() => checkTraceUrlTemplate('EXTSCOPE_TRACE_URL', 'http://jaeger:16686/trace/')).toThrow(ConfigError);
    expect(() => checkTraceUrlTemplate('EXTSCOPE_TRACE_URL', 'http://jaeger:16686/trace/')).toThrow(/must contain \{traceId\}/);
    expect(() => checkTraceUrlTemplate('EXTSCOPE_TRACE_URL', 'javascript:alert({traceId})')).toThrow(/must be an http\(s\) URL/);
    expect(() => checkTraceUrlTemplate('EXTSCOPE_TRACE_URL', 'jaeger/{traceId}')).toThrow(/must be an http\(s\) URL/);
  });
});

describe('a trace link', () => {
  const template = 'http://jaeger:16686/trace/{traceId}?uiFind={spanId}';

  it('puts the trace and span ids in the template', () => {
    expect(traceLink(template, TRACE, SPAN)).toBe(`http://jaeger:16686/trace/${TRACE}?uiFind=${SPAN}`);
  });

  it('is null without a template', () => {
    expect(traceLink(undefined, TRACE, SPAN)).toBeNull();
  });

  it('is null for a trace id that is not 32 lowercase hex digits, or all zeros: a sender chooses the ids', () => {
    for (const id of ['', TRACE.toUpperCase(), `${TRACE}0`, TRACE.slice(1), '"><script>alert(1)</script>', `../../${TRACE.slice(6)}`, '0'.repeat(32)])
      expect(traceLink(template, id, SPAN), id).toBeNull();
  });

  it('leaves a malformed span id out', () => {
    expect(traceLink(template, TRACE, '<b>x</b>')).toBe(`http://jaeger:16686/trace/${TRACE}?uiFind=`);
  });
});
