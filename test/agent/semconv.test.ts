import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import * as semconv from '../../agent/semconv.js';

describe("the agent's copies of OpenTelemetry names", () => {
  it('equal the incubating entry point of @opentelemetry/semantic-conventions (which exports the stable names too), where it has them', () => {
    const published = incubating as Record<string, unknown>;
    const copies = Object.entries(semconv);
    // The overflow attribute is named by the metrics SDK specification, not by semantic-conventions.
    const absent = copies.filter(([name]) => !(name in published)).map(([name]) => name);
    expect(absent).toEqual(['ATTR_OTEL_METRIC_OVERFLOW']);
    for (const [name, value] of copies) if (name in published) expect(value, name).toBe(published[name]);
  });
});
