// The agent's own work per request, with nothing else in the way: the real `serveStdio` entry observer, the
// pinned instance's connection and the request pipeline (metrics only, counting into a meter provider), over
// stand-in transports that answer at once (no SDK, no client). Side by side in one process: the same stand-in
// unobserved, then observed, alternately; the difference is what the agent adds to each request while its code
// and data are in the CPU caches. Inside a real server the same work costs several times more (the SDK's code and
// data evict the agent's between a request and its answer): agent-cost.mjs and agent-loading.mjs measure that.
// Also times the pieces on the path one by one: reading a request, reading its declaration, the recorder's repeat.
//   node test/bench/agent-path.mjs [rounds=8] [requests per round=1000000]
import { trace } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { EntryExchanges } from '../../agent/dist/agent/observe/entry-exchange.js';
import { readDeclaredExtensions } from '../../agent/dist/agent/observe/extension-map.js';
import { readOutcome, readRequest } from '../../agent/dist/agent/observe/request-facts.js';
import { observingServeStdio } from '../../agent/dist/agent/patches/serve-stdio.js';
import { ServerConnections } from '../../agent/dist/agent/patches/server-connect.js';
import { Recorder } from '../../agent/dist/agent/record/recorder.js';
import { RequestPipeline } from '../../agent/dist/agent/record/request-pipeline.js';
import { OnDemandReader } from '../support/on-demand-reader.mjs';
import { checkExact } from './lib/exactness.mjs';
import { alternated } from './lib/interleaved.mjs';
import { median } from './lib/paired-stats.mjs';
import { numericArgs } from './lib/smoke.mjs';

const [rounds, perRound] = numericArgs(process.argv.slice(2), [
  [8, 1],
  [1_000_000, 10_000],
]);
const TASKS = 'io.modelcontextprotocol/tasks';
const LIMITS = { maxIds: 64, maxIdLength: 128 };
// What a v2 client sends for `tools/call` on the 2026-07-28 revision, as fresh objects (a ring of them, as if just parsed).
const template = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'tools/call',
  params: {
    name: 'echo',
    arguments: { text: 'hi' },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'bench-client', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
    },
  },
});
const RING = 4096;
const messages = Array.from({ length: RING }, (_, id) => ({ ...JSON.parse(template), id }));

const reader = new OnDemandReader();

/** A stand-in for serveStdio with one pinned instance that answers every request at once; observed or not. */
function standIn(observed) {
  const pipeline = new RequestPipeline({ spans: false, captureSettings: false, limits: LIMITS, cardinalityLimit: 1000, maxStreams: 10_000 }, () =>
    trace.getTracer('unused'),
  );
  pipeline.bind(new MeterProvider({ readers: observed ? [reader] : [] }).getMeter('extscope'));
  const exchanges = new EntryExchanges();
  const servers = new ServerConnections(pipeline, exchanges, undefined);
  let answered = 0;
  const wire = {
    onmessage: undefined,
    onclose: undefined,
    start() {},
    send() {
      answered++;
    },
  };
  const serveStdio = (factory, options) => {
    const transport = options.transport;
    const channel = { onmessage: undefined, start() {}, send: (message) => transport.send(message) };
    if (observed) servers.attach(factory(), channel);
    channel.onmessage = (message) => channel.send({ jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'hi' }] } });
    channel.start();
    transport.onmessage = (message) => channel.onmessage(message);
    transport.start();
  };
  const factory = () => ({ getCapabilities: () => ({ extensions: { [TASKS]: {} } }), _serverInfo: { name: 'pinned', version: '1.0.0' } });
  (observed ? observingServeStdio(serveStdio, undefined, pipeline, exchanges) : serveStdio)(factory, { transport: wire });
  return { wire, pipeline, answered: () => answered };
}

const nanosPer = (count, run) => {
  const started = process.hrtime.bigint();
  run();
  return Number(process.hrtime.bigint() - started) / count;
};

const bare = standIn(false);
const observed = standIn(true);
const drive = (side) =>
  nanosPer(perRound, () => {
    const { wire } = side;
    for (let i = 0; i < perRound; i++) wire.onmessage(messages[i % RING]);
  });
const sides = { bare, observed };
const timedRounds = await alternated(['bare', 'observed'], rounds + 2, async (side) => drive(sides[side]));
// The first two rounds warm the JIT up.
const pairs = timedRounds.bare.map((bareNanos, round) => ({ bare: bareNanos, observed: timedRounds.observed[round] })).slice(2);

// The pieces, each in its own loop over the same messages.
const reading = { limits: LIMITS, declarations: { last: undefined, settingsRead: false }, spanDetails: false };
const facts = readRequest(messages[0], undefined, reading);
const answer = readOutcome({ jsonrpc: '2.0', id: 0, result: { content: [] } }, LIMITS);
const server = {
  identity: { name: 'pinned', version: '1.0.0' },
  extensions: { declaration: 'declared', ids: [TASKS], settings: [{}], invalid: 0, dropped: 0 },
  ids: new Set([TASKS]),
  fingerprints: ['0'],
};
const recorder = new Recorder({ cardinalityLimit: 1000, maxStreams: 10_000 });
let sink = 0;
const pieces = {
  'reading a request (readRequest)': () => {
    for (let i = 0; i < perRound; i++) sink += readRequest(messages[i % RING], undefined, reading).id;
  },
  'of it, reading its declaration (readDeclaredExtensions)': () => {
    for (let i = 0; i < perRound; i++)
      sink += readDeclaredExtensions(messages[i % RING].params._meta['io.modelcontextprotocol/clientCapabilities'], LIMITS, reading.declarations).ids.length;
  },
  'counting a repeat of the last request (Recorder.record)': () => {
    for (let i = 0; i < perRound; i++) recorder.record(facts, server, answer);
  },
};
const pieceNanos = Object.fromEntries(Object.entries(pieces).map(([label, run]) => [label, median(Array.from({ length: 5 }, () => nanosPer(perRound, run)))]));

console.log(
  `the agent's path per request, hot: ${rounds} rounds × ${perRound} tools/call through a serveStdio stand-in, metrics only, Node ${process.version}`,
);
console.log('');
console.log('| | ns per request (median of rounds) |');
console.log('| --- | ---: |');
console.log(`| stand-in, unobserved | ${median(pairs.map((pair) => pair.bare)).toFixed(1)} |`);
console.log(`| stand-in, observed | ${median(pairs.map((pair) => pair.observed)).toFixed(1)} |`);
console.log(`| **what the agent adds** (paired median) | **${median(pairs.map((pair) => pair.observed - pair.bare)).toFixed(1)}** |`);
for (const [label, nanos] of Object.entries(pieceNanos)) console.log(`| ${label} | ${nanos.toFixed(1)} |`);
console.log('');
const sent = (rounds + 2) * perRound;
console.log(`observed: ${observed.answered()} answers, ${observed.pipeline.recorded} requests recorded`);
if (sink < 0) throw new Error('the pieces were not run');
checkExact('observed stand-in: requests recorded of those sent', observed.pipeline.recorded, sent);
checkExact('observed stand-in: answers of requests sent', observed.answered(), sent);
