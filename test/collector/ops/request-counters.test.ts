import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { type SeriesDims, SeriesKind } from '../../../collector/model/batches.js';
import type { AppliedCount } from '../../../collector/model/records.js';
import { MAX_COUNTER_SERIES, RequestCounters } from '../../../collector/ops/request-counters.js';

const TASKS = 'io.modelcontextprotocol/tasks';

function dims(changes: Partial<SeriesDims>): SeriesDims {
  return {
    kind: SeriesKind.Requests,
    serverName: 'server',
    serverVersion: '1.0',
    method: 'tools/call',
    era: 'modern',
    protocolVersion: '2026-07-28',
    clientName: 'alpha',
    clientVersion: '1.0',
    clientDeclaration: 'declared',
    serverDeclaration: 'declared',
    outcome: 'complete',
    statusCode: null,
    extensionId: null,
    clientDeclared: null,
    serverDeclared: null,
    negotiated: null,
    required: null,
    ...changes,
  };
}

const extension = (clientDeclared: boolean, serverDeclared: boolean, changes: Partial<SeriesDims> = {}): SeriesDims =>
  dims({
    kind: SeriesKind.Extension,
    extensionId: TASKS,
    clientDeclared,
    serverDeclared,
    negotiated: clientDeclared && serverDeclared,
    required: false,
    ...changes,
  });

/** The exposition's lines of one metric, without HELP and TYPE. */
async function lines(registry: Registry, name: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line.startsWith(`${name}{`));
}

describe('request counters', () => {
  it('count each applied increment once, by the per-request state; -32021 answers apart; the same label set summed', async () => {
    const registry = new Registry();
    const counters = new RequestCounters(registry);
    const counts: AppliedCount[] = [
      { service: 'shop', dims: dims({}), count: 5 },
      // Another series (another method) of the same label set.
      { service: 'shop', dims: dims({ method: 'tools/list' }), count: 2 },
      { service: 'shop', dims: dims({ serverDeclaration: 'unknown', clientName: null, clientVersion: null }), count: 1 },
      { service: 'shop', dims: extension(true, true), count: 4 },
      { service: 'shop', dims: extension(true, false), count: 1 },
      { service: 'shop', dims: extension(false, true), count: 2 },
      { service: 'shop', dims: extension(false, false, { required: true, outcome: 'error', statusCode: '-32021' }), count: 3 },
      { service: 'shop', dims: extension(true, false, { serverDeclaration: 'unknown' }), count: 6 },
      { service: 'shop', dims: dims({}), count: 0 },
    ];
    counters.applied(counts);
    await counters.settled();
    expect(await lines(registry, 'extscope_requests_total')).toEqual([
      'extscope_requests_total{service="shop",client="alpha",client_version="1.0",client_declaration="declared",server_declaration="declared"} 7',
      'extscope_requests_total{service="shop",client="",client_version="",client_declaration="declared",server_declaration="unknown"} 1',
    ]);
    expect((await lines(registry, 'extscope_extension_requests_total')).map((line) => `${/state="(\w+)"/.exec(line)?.[1]} ${line.split(' ').at(-1)}`)).toEqual([
      'negotiated 4',
      'client_only 1',
      'server_only 2',
      'neither 3',
      'unknown 6',
    ]);
    expect(await lines(registry, 'extscope_missing_capability_errors_total')).toEqual([
      `extscope_missing_capability_errors_total{service="shop",client="alpha",client_version="1.0",extension="${TASKS}"} 3`,
    ]);
  });

  it('past the label-set cap, new label sets are counted as _OTHER (closed labels kept); known ones keep counting', async () => {
    const registry = new Registry();
    const counters = new RequestCounters(registry);
    const fill = Array.from({ length: MAX_COUNTER_SERIES }, (_, index) => ({ service: 'shop', dims: dims({ clientName: `client-${index}` }), count: 1 }));
    counters.applied(fill);
    counters.applied([
      { service: 'shop', dims: dims({ clientName: 'late-1' }), count: 2 },
      { service: 'shop', dims: dims({ clientName: 'late-2', serverDeclaration: 'none' }), count: 3 },
      { service: 'shop', dims: dims({ clientName: 'client-0' }), count: 4 },
    ]);
    await counters.settled();
    const all = await lines(registry, 'extscope_requests_total');
    expect(all).toHaveLength(MAX_COUNTER_SERIES + 2);
    expect(all.filter((line) => line.includes('_OTHER'))).toEqual([
      'extscope_requests_total{service="_OTHER",client="_OTHER",client_version="_OTHER",client_declaration="declared",server_declaration="declared"} 2',
      'extscope_requests_total{service="_OTHER",client="_OTHER",client_version="_OTHER",client_declaration="declared",server_declaration="none"} 3',
    ]);
    expect(all).toContain(
      'extscope_requests_total{service="shop",client="client-0",client_version="1.0",client_declaration="declared",server_declaration="declared"} 5',
    );
  });

  it("a large batch is counted in later turns of the event loop, not the caller's; settled() waits for all of it", async () => {
    const registry = new Registry();
    const counters = new RequestCounters(registry);
    counters.applied(Array.from({ length: 3000 }, (_, index) => ({ service: 'shop', dims: dims({ clientName: `c-${index}` }), count: 1 })));
    // Nothing is counted in the caller's turn…
    expect(await lines(registry, 'extscope_requests_total')).toEqual([]);
    await counters.settled();
    // …and everything once settled.
    const all = await lines(registry, 'extscope_requests_total');
    expect(all).toHaveLength(3000);
    expect(all.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0)).toBe(3000);
  });
});
