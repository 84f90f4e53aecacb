import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GRPC_EXPORTERS, GRPC_EXPORTER_VERSION } from '../../agent/register/exporters.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../../agent/version.js';

interface Manifest {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}
const read = (path: string): Manifest => JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as Manifest;
const agent = read('../../agent/package.json');
const collector = read('../../package.json');

describe('the instrumentation scope', () => {
  it('is named and versioned as agent/package.json says', () => {
    expect([PACKAGE_NAME, PACKAGE_VERSION]).toEqual([agent.name, agent.version]);
  });

  it('is released with the collector: the collector depends on exactly this version of the agent', () => {
    expect(collector.version).toBe(agent.version);
    expect(collector.dependencies[agent.name]).toBe(agent.version);
  });
});

describe('the optional gRPC exporters', () => {
  it('are optional peer dependencies of the agent, at the version its stderr line tells to install', () => {
    for (const name of Object.values(GRPC_EXPORTERS)) {
      expect(agent.peerDependencies?.[name], name).toBe(GRPC_EXPORTER_VERSION);
      expect(agent.peerDependenciesMeta?.[name]?.optional, name).toBe(true);
      expect(agent.dependencies[name], name).toBeUndefined();
    }
  });

  it('are of the same release as the OTLP exporters the agent depends on', () => {
    expect(agent.dependencies['@opentelemetry/exporter-metrics-otlp-proto']).toBe(GRPC_EXPORTER_VERSION);
    expect(agent.dependencies['@opentelemetry/exporter-trace-otlp-proto']).toBe(GRPC_EXPORTER_VERSION);
  });
});
