/**
 * In-process harness: a real OpenTelemetry SDK (cumulative reader read on demand, in-memory span exporter) and
 * the real MCP SDKs, required (CJS builds) only after the instrumentation is enabled so its hooks patch them.
 * ESM builds and the zero-code entry are covered by the child-process suites.
 */
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/client';
import { type Attributes, context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ExtscopeInstrumentation } from '../../agent/index.js';
import { OnDemandReader } from '../support/on-demand-reader.mjs';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

export const reader = new OnDemandReader();
export const meterProvider = new MeterProvider({ readers: [reader] });
export const spanExporter = new InMemorySpanExporter();
export const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
trace.setGlobalTracerProvider(tracerProvider);

export const instrumentation = new ExtscopeInstrumentation({ spans: true });
instrumentation.setMeterProvider(meterProvider);
instrumentation.setTracerProvider(tracerProvider);

const require = createRequire(import.meta.url);
export const v2 = require('@modelcontextprotocol/server') as typeof import('@modelcontextprotocol/server');
export const v2stdio = require('@modelcontextprotocol/server/stdio') as typeof import('@modelcontextprotocol/server/stdio');
export const v1mcp = require('@modelcontextprotocol/sdk/server/mcp.js') as typeof import('@modelcontextprotocol/sdk/server/mcp.js');
export const v1server = require('@modelcontextprotocol/sdk/server/index.js') as typeof import('@modelcontextprotocol/sdk/server/index.js');
export const v1client = require('@modelcontextprotocol/sdk/client/index.js') as typeof import('@modelcontextprotocol/sdk/client/index.js');
export const v1memory = require('@modelcontextprotocol/sdk/inMemory.js') as typeof import('@modelcontextprotocol/sdk/inMemory.js');

export const CAPS = 'io.modelcontextprotocol/clientCapabilities';
export const TASKS = 'io.modelcontextprotocol/tasks';
export const REPLAY = 'com.example/replay';

export interface Point {
  attributes: Attributes;
  value: number;
}

/** Every point of one metric, cumulative since the harness started. */
export async function points(metricName: string): Promise<Point[]> {
  const { resourceMetrics } = await reader.collect();
  const found: Point[] = [];
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== metricName) continue;
      for (const point of metric.dataPoints) found.push({ attributes: point.attributes, value: point.value as number });
    }
  }
  return found;
}

/** Sum of a metric over the points whose attributes include all of `match`. */
export async function total(metricName: string, match: Attributes): Promise<number> {
  return (await points(metricName))
    .filter((point) => Object.entries(match).every(([key, value]) => point.attributes[key] === value))
    .reduce((sum, point) => sum + point.value, 0);
}

export function spansOf(clientName: string): ReadableSpan[] {
  return spanExporter.getFinishedSpans().filter((span) => span.attributes['extscope.client.name'] === clientName);
}

/** Resolves once `count` parties arrived; each `arrive()` waits for all of them. */
export function barrier(count: number): { arrive(): Promise<void> } {
  let arrived = 0;
  let release!: () => void;
  const all = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    arrive() {
      arrived++;
      if (arrived === count) release();
      return all;
    },
  };
}

/** Telemetry reaches the sink asynchronously (spans end after the response is sent): poll for it. */
export { eventually } from '../support/eventually.js';

export type Factory = Parameters<typeof v2stdio.serveStdio>[0];

/** A 2026-07-28 connection: `serveStdio` pins one server instance; the wire is an in-memory pair. */
export async function connectModern(factory: Factory, clientName: string, capabilities: Record<string, unknown>) {
  const [clientSide, serverSide] = v2.InMemoryTransport.createLinkedPair();
  const handle = v2stdio.serveStdio(factory, { transport: serverSide });
  const client = new Client({ name: clientName, version: '1.0.0' }, { capabilities, versionNegotiation: { mode: 'auto' } });
  await client.connect(clientSide);
  return {
    client,
    clientSide,
    async close() {
      await client.close();
      await handle.close();
    },
  };
}

export function serverWith(extensions: Record<string, Record<string, string | number | boolean>>, name = 'test-server') {
  return new v2.McpServer({ name, version: '3.1.0' }, { capabilities: { extensions, prompts: {} } });
}

export const requestCount = (clientName: string, match: Record<string, string> = {}) =>
  total('extscope.requests', { 'extscope.client.name': clientName, ...match });
export const extensionCount = (clientName: string, id: string, match: Record<string, string | boolean> = {}) =>
  total('extscope.extension.requests', { 'extscope.client.name': clientName, 'extscope.extension.id': id, ...match });
