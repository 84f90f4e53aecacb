/**
 * The child process of {@link FinalExport}: reads one export on stdin, sends it with the OTLP exporter the
 * `OTEL_*` variables describe (the parent's environment), and answers on stdout with a {@link FinalExportAnswer}.
 * It runs while its parent waits in its `'exit'` event, and is killed at the parent's deadline.
 */
import { readFileSync } from 'node:fs';
import { ExportResultCode } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { watchRejections } from './export-health.js';
import { otlpMetricExporter } from './exporters.js';
import type { FinalExportAnswer, FinalExportRequest } from './final-export.js';

function answer(result: FinalExportAnswer): void {
  // This process's own stdout: a pipe its parent (the agent) reads, never the MCP server's stream.
  process.stdout.write(JSON.stringify(result));
}

try {
  const request = JSON.parse(readFileSync(0, 'utf8')) as FinalExportRequest;
  const exporter = otlpMetricExporter(request.protocol, { timeoutMillis: request.timeoutMillis });
  let rejected: FinalExportAnswer['rejected'];
  watchRejections(exporter, (rejection) => (rejected = rejection));
  const metrics: ResourceMetrics = {
    resource: resourceFromAttributes(request.resource.attributes, request.resource.schemaUrl === undefined ? {} : { schemaUrl: request.resource.schemaUrl }),
    scopeMetrics: [{ scope: request.scope, metrics: request.metrics }],
  };
  exporter.export(metrics, (result) => {
    answer({
      ok: result.code === ExportResultCode.SUCCESS,
      ...(result.error !== undefined && { error: result.error.message }),
      ...(rejected !== undefined && { rejected }),
    });
    // Nothing else to wait for (a retry timer, a keep-alive socket): the answer is the whole job.
    process.exit(0);
  });
} catch (error) {
  answer({ ok: false, error: error instanceof Error ? error.message : String(error) });
}
