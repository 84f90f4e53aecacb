import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OtlpSink, startOtlpSink } from '../../support/otlp-sink.js';
import { agentEnv, fixture, rawStdioExchange } from '../../support/processes.js';

interface ModuleFormats {
  esm: string[];
  cjs: string[];
}

/** What test/fixtures/module-formats.mjs wrote at the child's exit. */
function moduleFormats(stderr: string): ModuleFormats {
  const line = stderr.split('\n').find((candidate) => candidate.startsWith('module-formats '));
  if (line === undefined) throw new Error(`no module-formats line in the child's stderr: ${stderr}`);
  return JSON.parse(line.slice('module-formats '.length)) as ModuleFormats;
}

const LEGACY_SESSION = [
  {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'copies', version: '1.0.0' } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'once' } } },
];

let sink: OtlpSink;
beforeAll(async () => {
  sink = await startOtlpSink();
});
afterAll(() => sink.close());

// Packages with an `exports` map offer an ESM build to `import` and a CJS one to `require`; the OpenTelemetry
// SDK packages `require` theirs, so an `import` of the same package by the agent would load a second copy.
describe('@extscope/agent/register loads each OpenTelemetry package once', () => {
  for (const script of ['v2-stdio.mjs', 'v2-stdio.cjs']) {
    for (const spans of [true, false]) {
      it(`${script}, spans ${spans ? 'on' : 'off'}: no OpenTelemetry package is loaded as an ES module, beside its CommonJS copy`, async () => {
        const { stdout, stderr, code } = await rawStdioExchange(
          fixture(script),
          LEGACY_SESSION,
          true,
          agentEnv(sink.url, { EXTSCOPE_SPANS: String(spans) }),
          [],
          {
            preload: [fixture('module-formats.mjs')],
          },
        );
        expect(code).toBe(0);
        expect(stdout.toString('utf8')).toContain('"text":"once"');
        const { esm, cjs } = moduleFormats(stderr);
        // The probe sees both formats: the SDK's ESM build (for the .mjs fixture), the OpenTelemetry packages' CJS.
        if (script.endsWith('.mjs')) expect(esm).toContain('@modelcontextprotocol/server');
        expect(cjs).toEqual(expect.arrayContaining(['@opentelemetry/api', '@opentelemetry/sdk-metrics', '@opentelemetry/resources']));
        if (spans) expect(cjs).toContain('@opentelemetry/sdk-trace-base');
        expect(esm.filter((name) => name.startsWith('@opentelemetry/'))).toEqual([]);
      });
    }
  }
});
