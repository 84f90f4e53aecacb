import { describe, expect, it } from 'vitest';
import { JsonMappingError, parseOtlpJson } from '../../../collector/otlp/json-mapping.js';

describe('OTLP/JSON mapping', () => {
  it('turns hex ids into what the generated code expects and checks the numbers extscope reads', () => {
    const parsed = parseOtlpJson(
      JSON.stringify({
        resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', startTimeUnixNano: 5 }] }] }],
      }),
    );
    const span = (parsed['resourceSpans'] as { scopeSpans: { spans: Record<string, unknown>[] }[] }[])[0]?.scopeSpans[0]?.spans[0];
    expect(Buffer.from(span?.['traceId'] as string, 'base64').toString('hex')).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(Buffer.from(span?.['spanId'] as string, 'base64').toString('hex')).toBe('b7ad6b7169203331');
    for (const body of [
      '{"a":{"timeUnixNano":"12x"}}',
      '{"a":{"asInt":1.5}}',
      '{"a":{"asDouble":"lots"}}',
      '{"traceId":"xyz"}',
      '{"spanId":"00"}',
      `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`,
      'null',
      '"text"',
    ]) {
      expect(() => parseOtlpJson(body), body).toThrow(JsonMappingError);
    }
    expect(parseOtlpJson('{"a":{"asDouble":"NaN","timeUnixNano":"1700000000000000000","asInt":-3}}')).toBeTruthy();
  });
});
