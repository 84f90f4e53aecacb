import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OtlpSink, startOtlpSink } from '../../support/otlp-sink.js';
import { ROOT, agentEnv, fixture, nodeArgs } from '../../support/processes.js';

let sink: OtlpSink;
beforeAll(async () => {
  sink = await startOtlpSink();
});
afterAll(() => sink.close());

describe("@extscope/agent/register next to the application's own OpenTelemetry SDK", () => {
  it('a short stdio session is flushed at exit through the adopted providers (3 of 3), which are not shut down', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: nodeArgs(fixture('own-sdk-stdio.mjs'), true),
      cwd: ROOT,
      // The app's reader exports once a minute: only a flush at exit gets the session out.
      env: agentEnv(sink.url, { OTEL_METRIC_EXPORT_INTERVAL: '60000' }),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const client = new Client({ name: 'adopted-client', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(transport);
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    await client.callTool({ name: 'echo', arguments: { text: 'a' } });
    await client.callTool({ name: 'echo', arguments: { text: 'b' } });
    await client.close();

    // server/discover, then the two calls.
    await expect.poll(() => sink.sum('extscope.requests', { 'extscope.client.name': 'adopted-client' }), { timeout: 10_000 }).toBe(3);
    expect(sink.sum('extscope.requests', { 'extscope.client.name': 'adopted-client', 'mcp.method.name': 'tools/call' })).toBe(2);
    // Through the app's own exporter: its metric is there too, and the agent started no SDK of its own.
    expect(sink.points.some((point) => point.metric === 'own_app.started')).toBe(true);
    expect(new Set(sink.points.filter((point) => point.metric === 'extscope.requests').map((point) => JSON.stringify(point.resource))).size).toBe(1);
    await expect.poll(() => stderr, { timeout: 10_000 }).toContain('appProviderShutDown');
    expect(stderr).toContain('{"appProviderShutDown":false}');
  });
});
