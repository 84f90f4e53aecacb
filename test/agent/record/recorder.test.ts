import { describe, expect, it } from 'vitest';
import type { Outcome, RequestFacts } from '../../../agent/observe/request-facts.js';
import type { ServerAdvertisement } from '../../../agent/observe/server-advertisement.js';
import { Recorder } from '../../../agent/record/recorder.js';
import { ADVERTISED_ATTRIBUTES, type AttributeSpec, EXTENSION_ATTRIBUTES, REQUEST_ATTRIBUTES } from '../../../contract/index.js';
import { declared, facts, metricReader } from '../helpers.js';

function advertisement(name: string, version: string, ids: string[], extra: { invalid?: number } = {}): ServerAdvertisement {
  const extensions = ids.length === 0 && extra.invalid === undefined ? { ...declared([]), declaration: 'none' as const } : declared(ids, extra);
  return { identity: { name, version }, extensions, ids: new Set(ids), fingerprints: ids.map((_, i) => `${i}`.padStart(16, '0')) };
}

function recorderWithReader(limits = { cardinalityLimit: 1000, maxStreams: 10_000 }) {
  const recorder = new Recorder(limits);
  const metrics = metricReader();
  recorder.bind(metrics.meter);
  return { recorder, metrics };
}

const complete: Outcome = { outcome: 'complete' };
const names = (table: readonly AttributeSpec[]) => table.map((attribute) => attribute.name);

describe('Recorder: attributes as the contract tables list them', () => {
  it('a request point carries every request attribute, in table order, read from the finished request', async () => {
    const { recorder, metrics } = recorderWithReader();
    recorder.record(
      facts({ method: 'tools/call', era: 'modern', protocolVersion: '2026-07-28', clientName: 'c', clientVersion: '1.2', client: declared(['a/x']) }),
      advertisement('s', '3.1', ['a/x']),
      { outcome: 'error', errorCode: -32601 },
    );
    const [point] = await metrics.points('extscope.requests');
    expect(Object.keys(point!.attributes)).toEqual(names(REQUEST_ATTRIBUTES));
    expect(Object.values(point!.attributes)).toEqual(['s', '3.1', 'tools/call', 'modern', '2026-07-28', 'c', '1.2', 'declared', 'declared', 'error', '-32601']);
    expect(point!.value).toBe(1);
  });

  it('leaves absent values out; a request no server instance saw has the server declaration unknown', async () => {
    const { recorder, metrics } = recorderWithReader();
    recorder.record(facts({ method: 'initialize', era: 'legacy' }), undefined, complete);
    const [point] = await metrics.points('extscope.requests');
    expect(point!.attributes).toEqual({
      'mcp.method.name': 'initialize',
      'extscope.era': 'legacy',
      'extscope.client.declaration': 'unknown',
      'extscope.server.declaration': 'unknown',
      'extscope.outcome': 'complete',
    });
  });

  it('an extension point carries the request attributes, then the extension table, in table order', async () => {
    const { recorder, metrics } = recorderWithReader();
    recorder.record(facts({ clientName: 'c', client: declared(['a/x']) }), advertisement('s', '1', ['a/x']), complete);
    const [point] = await metrics.points('extscope.extension.requests');
    const requestNames = names(REQUEST_ATTRIBUTES).filter((name) => name in point!.attributes);
    expect(Object.keys(point!.attributes)).toEqual([...requestNames, ...names(EXTENSION_ATTRIBUTES)]);
    expect(point!.attributes).toMatchObject({
      'extscope.extension.id': 'a/x',
      'extscope.extension.client_declared': true,
      'extscope.extension.server_declared': true,
      'extscope.extension.negotiated': true,
      'extscope.extension.required': false,
    });
  });

  it('negotiated only when both sides declared the id, never for the invalid bucket', async () => {
    const { recorder, metrics } = recorderWithReader();
    recorder.record(facts({ client: declared(['a/x', 'b/y'], { invalid: 1 }) }), advertisement('s', '1', ['a/x', 'c/z'], { invalid: 1 }), complete);
    const flags = Object.fromEntries(
      (await metrics.points('extscope.extension.requests')).map(({ attributes }) => [
        attributes['extscope.extension.id'],
        [attributes['extscope.extension.client_declared'], attributes['extscope.extension.server_declared'], attributes['extscope.extension.negotiated']],
      ]),
    );
    expect(flags).toEqual({
      'a/x': [true, true, true],
      'b/y': [true, false, false],
      'c/z': [false, true, false],
      _invalid: [true, true, false],
    });
  });

  it('the advertised gauges carry the server and each id with its fingerprint, in table order', async () => {
    const { recorder, metrics } = recorderWithReader();
    recorder.advertise(advertisement('s', '1', ['a/x', 'b/y']));
    recorder.advertise(advertisement('s', '1', ['a/x', 'b/y'])); // the same variant again: reported once
    const advertised = await metrics.points('extscope.server.extension.advertised');
    expect(advertised.map((point) => Object.keys(point.attributes))).toEqual([names(ADVERTISED_ATTRIBUTES), names(ADVERTISED_ATTRIBUTES)]);
    expect(advertised.map((point) => [point.attributes['extscope.extension.id'], point.attributes['extscope.extension.fingerprint'], point.value])).toEqual([
      ['a/x', '0000000000000000', 1],
      ['b/y', '0000000000000001', 1],
    ]);
    expect(await metrics.points('extscope.server.extensions')).toEqual([
      { attributes: { 'extscope.server.name': 's', 'extscope.server.version': '1' }, value: 2 },
    ]);
  });
});

describe('Recorder: bounded by the cardinality guards', () => {
  it('guards exactly the attributes whose table entry is sender-controlled', async () => {
    const { recorder, metrics } = recorderWithReader({ cardinalityLimit: 1, maxStreams: 10_000 });
    // Every attribute takes at least two values over these requests.
    recorder.record(
      facts({ method: 'm1', era: 'modern', protocolVersion: 'p1', clientName: 'c1', clientVersion: '1', client: declared(['a/x']) }),
      advertisement('s1', '1', ['a/x']),
      complete,
    );
    recorder.record(
      facts({ method: 'm2', era: 'legacy', protocolVersion: 'p2', clientName: 'c2', clientVersion: '2', client: { ...declared([]), declaration: 'none' } }),
      advertisement('s2', '2', []),
      {
        outcome: 'error',
        errorCode: -32601,
      },
    );
    recorder.record(facts({ client: declared(['b/y']) }), undefined, { outcome: 'error', errorCode: -32602 });

    const folded = (await metrics.points('extscope.agent.cardinality.overflow')).map((point) => point.attributes['extscope.agent.attribute']);
    const senderControlled = [...REQUEST_ATTRIBUTES, ...EXTENSION_ATTRIBUTES]
      .filter((attribute: AttributeSpec) => attribute.sender === true)
      .map((attribute) => attribute.name);
    expect(new Set(folded)).toEqual(new Set(senderControlled));
    // The others keep every value they took.
    const requests = await metrics.points('extscope.requests');
    expect(new Set(requests.map((point) => point.attributes['extscope.era']))).toEqual(new Set(['modern', 'legacy']));
    expect(new Set(requests.map((point) => point.attributes['extscope.client.declaration']))).toEqual(new Set(['declared', 'none']));
    expect(new Set(requests.map((point) => point.attributes['extscope.server.declaration']))).toEqual(new Set(['declared', 'none', 'unknown']));
  });

  it('a repeated request whose values were folded is counted as folded again', async () => {
    const { recorder, metrics } = recorderWithReader({ cardinalityLimit: 1, maxStreams: 10_000 });
    recorder.record(facts({ method: 'first' }), undefined, complete);
    recorder.record(facts({ method: 'second' }), undefined, complete);
    recorder.record(facts({ method: 'second' }), undefined, complete);
    expect(await metrics.sum('extscope.agent.cardinality.overflow', { 'extscope.agent.attribute': 'mcp.method.name' })).toBe(2);
    expect(await metrics.sum('extscope.requests', { 'mcp.method.name': '_OTHER' })).toBe(2);
    expect(await metrics.sum('extscope.requests', { 'mcp.method.name': 'first' })).toBe(1);
  });

  it('stays within its caps under 10,000 distinct junk ids, and still counts every request', async () => {
    const { recorder, metrics } = recorderWithReader({ cardinalityLimit: 100, maxStreams: 500 });
    for (let i = 0; i < 10_000; i++) {
      recorder.record(
        facts({ method: `junk/${i}`, id: i, clientName: `client-${i}`, client: declared([`com.junk/id-${i}`], { invalid: 1 }) }),
        undefined,
        complete,
      );
    }
    expect((await metrics.points('extscope.requests')).length).toBeLessThanOrEqual(501);
    expect((await metrics.points('extscope.extension.requests')).length).toBeLessThanOrEqual(501);
    expect(await metrics.sum('extscope.requests')).toBe(10_000);
    expect(await metrics.sum('extscope.agent.extension_ids.rejected')).toBe(10_000);
    expect(await metrics.sum('extscope.agent.cardinality.overflow')).toBeGreaterThan(0);
  });
});

describe('Recorder: a request that repeats the last one', () => {
  it('counts the same objects again into every stream they counted into, each repeat once', async () => {
    const { recorder, metrics } = recorderWithReader();
    const client = declared(['a/x', 'b/y']);
    const server = advertisement('s', '1', ['a/x', 'c/z']);
    const request = facts({ clientName: 'c', client });
    for (let i = 0; i < 5; i++) recorder.record(request, server, complete);
    recorder.record(facts({ clientName: 'c', client: declared(['a/x', 'b/y']) }), server, complete); // an equal copy
    expect(await metrics.sum('extscope.requests')).toBe(6);
    for (const id of ['a/x', 'b/y', 'c/z']) expect(await metrics.sum('extscope.extension.requests', { 'extscope.extension.id': id })).toBe(6);
    expect(await metrics.sum('extscope.extension.requests', { 'extscope.extension.id': 'a/x', 'extscope.extension.negotiated': true })).toBe(6);
    recorder.record(request, advertisement('s', '1', ['b/y']), complete); // another server: its own streams
    expect(await metrics.sum('extscope.extension.requests', { 'extscope.extension.id': 'b/y', 'extscope.extension.negotiated': true })).toBe(1);
    expect(await metrics.sum('extscope.extension.requests', { 'extscope.extension.id': 'c/z' })).toBe(6);
  });

  it('a request differing from the last in any one input of a value is counted under its own values', async () => {
    const server = advertisement('s', '1', ['a/x']);
    const client = declared(['a/x']);
    const base: Partial<RequestFacts> = { method: 'tools/call', era: 'modern', protocolVersion: '2026-07-28', clientName: 'c', clientVersion: '1', client };
    const variations: [string, Partial<RequestFacts>, ServerAdvertisement | undefined, Outcome][] = [
      ['method', { method: 'tools/list' }, server, complete],
      ['era', { era: 'legacy' }, server, complete],
      ['protocol version', { protocolVersion: '2025-11-25' }, server, complete],
      ['client name', { clientName: 'd' }, server, complete],
      ['client version', { clientVersion: '2' }, server, complete],
      ['declaration', { client: declared(['b/y']) }, server, complete],
      ['server', {}, advertisement('s', '2', ['a/x']), complete],
      ['no server', {}, undefined, complete],
      ['outcome', {}, server, { outcome: 'tool_error' }],
      ['status code', {}, server, { outcome: 'error', errorCode: -32601 }],
      ['other status code', {}, server, { outcome: 'error', errorCode: -32602 }],
      ['required ids', {}, server, { outcome: 'error', errorCode: -32602, required: declared(['a/x']) }],
    ];
    /** Every point of both sums, keyed by metric and attributes. */
    const counted = async (record: (recorder: Recorder) => void) => {
      const { recorder, metrics } = recorderWithReader();
      record(recorder);
      const points = new Map<string, number>();
      for (const name of ['extscope.requests', 'extscope.extension.requests']) {
        for (const point of await metrics.points(name)) points.set(`${name} ${JSON.stringify(point.attributes)}`, point.value);
      }
      return points;
    };
    for (const [input, change, otherServer, outcome] of variations) {
      const first = (recorder: Recorder) => recorder.record(facts(base), server, complete);
      const second = (recorder: Recorder) => recorder.record(facts({ ...base, ...change }), otherServer, outcome);
      // Both after each other count what each counts alone: the second is never taken for a repeat of the first.
      const expected = await counted(first);
      for (const [key, value] of await counted((recorder) => [second, second].forEach((record) => record(recorder))))
        expected.set(key, (expected.get(key) ?? 0) + value);
      expect(await counted((recorder) => [first, second, second].forEach((record) => record(recorder))), input).toEqual(expected);
    }
  });

  it('counts again, on each repeat, the extension ids folded into _OTHER and the ids it rejected', async () => {
    const { recorder, metrics } = recorderWithReader({ cardinalityLimit: 1, maxStreams: 10_000 });
    recorder.record(facts({ client: declared(['a/x']) }), undefined, complete);
    const folding = facts({ client: declared(['b/y'], { invalid: 2 }) });
    for (let i = 0; i < 3; i++) recorder.record(folding, undefined, complete);
    expect(await metrics.sum('extscope.agent.cardinality.overflow', { 'extscope.agent.attribute': 'extscope.extension.id' })).toBe(3);
    expect(await metrics.sum('extscope.extension.requests', { 'extscope.extension.id': '_OTHER' })).toBe(3);
    expect(await metrics.sum('extscope.agent.extension_ids.rejected')).toBe(6);
    expect(await metrics.sum('extscope.requests')).toBe(4);
  });

  it('a collection between repeats reports every repeat counted before it, and the next one only those after', async () => {
    const { recorder, metrics } = recorderWithReader({ cardinalityLimit: 1, maxStreams: 10_000 });
    recorder.record(facts({ client: declared(['a/x']) }), undefined, complete);
    const folding = facts({ client: declared(['b/y'], { invalid: 1 }) });
    const reported = async () => [
      await metrics.sum('extscope.requests'),
      await metrics.sum('extscope.extension.requests', { 'extscope.extension.id': '_OTHER' }),
      await metrics.sum('extscope.agent.cardinality.overflow'),
      await metrics.sum('extscope.agent.extension_ids.rejected'),
    ];
    for (let i = 0; i < 4; i++) recorder.record(folding, undefined, complete);
    expect(await reported()).toEqual([5, 4, 4, 4]);
    expect(await reported()).toEqual([5, 4, 4, 4]);
    for (let i = 0; i < 3; i++) recorder.record(folding, undefined, complete);
    recorder.record(facts({ client: declared(['a/x']) }), undefined, complete);
    expect(await reported()).toEqual([9, 7, 7, 7]);
  });

  it('keeps counting a repeat into the overflow stream once maxStreams is reached', async () => {
    const { recorder, metrics } = recorderWithReader({ cardinalityLimit: 1000, maxStreams: 1 });
    recorder.record(facts({ method: 'first' }), undefined, complete);
    const second = facts({ method: 'second' });
    for (let i = 0; i < 4; i++) recorder.record(second, undefined, complete);
    const points = await metrics.points('extscope.requests');
    expect(points.map((point) => [point.attributes['mcp.method.name'] ?? point.attributes['otel.metric.overflow'], point.value]).sort()).toEqual([
      ['first', 1],
      [true, 4],
    ]);
  });
});
