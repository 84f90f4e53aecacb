// extscope against what a user would otherwise reach for, side by side in one run, on the same v2 server
// (compare-sentry-worker.mjs): uninstrumented; extscope with metrics only; extscope with spans; Sentry's MCP
// server instrumentation (@sentry/node, wrapMcpServerWithSentry, every transaction sampled, events sent to a
// loopback sink here); and a plain OpenTelemetry span-per-request wrapper. Each variant runs in a process of its
// own, the order rotating round by round; ratios are taken within each round (paired) and reported as the median
// with the range, because this machine is shared and its speed drifts between processes.
//   node test/bench/compare-sentry.mjs [rounds=5] [requests=20000] [concurrency=16]
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { median, medianInterval, percent as signed } from './paired-stats.mjs';

const run = promisify(execFile);
const worker = fileURLToPath(new URL('./compare-sentry-worker.mjs', import.meta.url));
const [rounds = 5, requests = 20_000, concurrency = 16] = process.argv.slice(2).map(Number);
const variants = ['bare', 'metrics', 'spans', 'sentry', 'wrapper'];
const labels = {
  bare: 'uninstrumented',
  metrics: 'extscope, metrics only',
  spans: 'extscope, metrics + spans',
  sentry: 'Sentry wrapMcpServerWithSentry',
  wrapper: 'OTel span-per-request wrapper',
};
const TASKS = 'io.modelcontextprotocol/tasks';

// The Sentry DSN points here: envelopes are read and counted, never forwarded.
const sink = { spans: 0, sample: undefined };
/** One MCP request is one span of op `mcp.server` (Sentry 11 streams spans: envelope items of type `span`). */
function received(item) {
  if (item?.attributes?.['sentry.op']?.value !== 'mcp.server') return;
  sink.spans++;
  sink.sample ??= { name: item.name, attributes: Object.fromEntries(Object.entries(item.attributes).map(([key, value]) => [key, value.value])) };
}
const server = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    let body = Buffer.concat(chunks);
    if (request.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
    const lines = body.toString('utf8').split('\n');
    // An envelope: its header, then per item a header line and a payload line.
    for (let index = 1; index + 1 < lines.length; index += 2) {
      try {
        const header = JSON.parse(lines[index]);
        const payload = JSON.parse(lines[index + 1]);
        if (header.type === 'span') for (const item of payload.items ?? []) received(item);
        if (header.type === 'transaction') for (const span of [payload.contexts?.trace, ...(payload.spans ?? [])]) received({ name: span?.description, attributes: Object.fromEntries(Object.entries(span?.data ?? {}).map(([key, value]) => [key, { value }])) });
      } catch {
        // Not an item this benchmark counts.
      }
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const dsn = `http://public@127.0.0.1:${server.address().port}/1`;

async function once(variant, count = requests, sampleRate = 1) {
  const before = sink.spans;
  const args = ['--expose-gc', worker, variant, String(count), String(concurrency), dsn, String(sampleRate)];
  const { stdout } = await run(process.execPath, args, { maxBuffer: 16 * 2 ** 20, timeout: 600_000 });
  const result = JSON.parse(stdout);
  if (variant === 'sentry') result.spansReceived = sink.spans - before;
  return result;
}

const loadBefore = loadavg();
const results = Object.fromEntries(variants.map((variant) => [variant, []]));
for (let round = 0; round < rounds; round++) {
  // Rotate the order, so no variant always runs first or last in a round.
  const order = variants.map((_, index) => variants[(index + round) % variants.length]);
  for (const variant of order) results[variant].push(await once(variant));
}
// Once more with 10 % of traces sampled, as production setups often do: what do the counts become?
const SAMPLED = 0.1;
const sampled = {};
for (const variant of ['spans', 'sentry', 'wrapper']) sampled[variant] = await once(variant, 5000, SAMPLED);
const loadAfter = loadavg();
server.close();

const ratios = (variant, base, key = 'rps') => results[variant].map((result, round) => result[key] / results[base][round][key]);
const percent = (value) => `${(value * 100).toFixed(1)}%`;
const spread = (values) => `${percent(Math.min(...values))}..${percent(Math.max(...values))}`;

console.log(`compare: ${rounds} rounds × ${requests} tools/call, ${concurrency} in flight, in-memory wire, 2026-07-28 client, Node ${process.version}`);
console.log(`load average (1 min) before ${loadBefore[0].toFixed(2)}, after ${loadAfter[0].toFixed(2)} on a shared 2-core machine`);
console.log('');
console.log('| variant | median req/s | req/s vs uninstrumented (paired median, range) | CPU µs/request | CPU vs uninstrumented (paired median, range) | of it main thread µs | main thread vs uninstrumented | heap after GC MiB | RSS MiB |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const variant of variants) {
  const rows = results[variant];
  const rel = ratios(variant, 'bare');
  const cpu = ratios(variant, 'bare', 'cpuMicrosPerRequest');
  const main = ratios(variant, 'bare', 'mainMicrosPerRequest');
  const relative = (values) => (variant === 'bare' ? '100%' : `${percent(median(values))} (${spread(values)})`);
  console.log(
    `| ${labels[variant]} | ${median(rows.map((row) => row.rps)).toFixed(0)} | ${relative(rel)} | ${median(rows.map((row) => row.cpuMicrosPerRequest)).toFixed(1)} | ${relative(cpu)} | ${median(rows.map((row) => row.mainMicrosPerRequest)).toFixed(1)} | ${relative(main)} | ${median(rows.map((row) => row.heapUsedMB)).toFixed(1)} | ${median(rows.map((row) => row.rssMB)).toFixed(0)} |`,
  );
}
const spansVsSentry = ratios('spans', 'sentry');
const spansVsSentryCpu = ratios('spans', 'sentry', 'cpuMicrosPerRequest');
const interval = (values) => medianInterval(values).map(signed).join('..');
console.log('');
console.log(`extscope metrics only vs uninstrumented, 95 % interval of the paired median: req/s ${interval(ratios('metrics', 'bare'))}, CPU per request ${interval(ratios('metrics', 'bare', 'cpuMicrosPerRequest'))}`);
console.log(`extscope with spans vs Sentry, paired medians: req/s ${percent(median(spansVsSentry))} (${spread(spansVsSentry)}), CPU per request ${percent(median(spansVsSentryCpu))} (${spread(spansVsSentryCpu)})`);

// What each one recorded, from what it exported in the last round.
const last = Object.fromEntries(variants.map((variant) => [variant, results[variant].at(-1)]));
const holds = (sample, text) => JSON.stringify(sample ?? {}).includes(text);
const measured = requests;
const records = {
  metrics: { sample: last.metrics.metricSample, count: last.metrics.counted },
  spans: { sample: [last.spans.metricSample, last.spans.spanSample], count: last.spans.counted },
  sentry: { sample: sink.sample, count: last.sentry.spansReceived },
  wrapper: { sample: last.wrapper.spanSample, count: last.wrapper.spansExported },
};
console.log('');
console.log(`What each recorded (last round; the client sent ${last.bare.requestsSent} requests, ${measured} of them measured):`);
console.log('');
const recordedSampled = {
  metrics: undefined,
  spans: `${sampled.spans.counted} of ${sampled.spans.requestsSent} counted (${sampled.spans.spansExported} spans)`,
  sentry: `${sampled.sentry.spansReceived} of ${sampled.sentry.requestsSent}`,
  wrapper: `${sampled.wrapper.spansExported} of ${sampled.wrapper.requestsSent}`,
};
console.log(`| variant | extension ids | declaration state | negotiated ids | requests recorded (every trace sampled) | with ${SAMPLED * 100} % of traces sampled |`);
console.log('| --- | --- | --- | --- | ---: | ---: |');
for (const variant of ['metrics', 'spans', 'sentry', 'wrapper']) {
  const { sample, count } = records[variant];
  const yes = (value) => (value ? 'yes' : 'no');
  console.log(
    `| ${labels[variant]} | ${yes(holds(sample, TASKS))} | ${yes(holds(sample, 'extscope.client.declaration'))} | ${yes(holds(sample, 'extscope.extension.negotiated'))} | ${count} of ${last[variant].requestsSent} | ${recordedSampled[variant] ?? 'no spans: counts only, exact'} |`,
  );
}
console.log('');
console.log(`A Sentry span as received: ${JSON.stringify(sink.sample)}`);
console.log(`An extscope extension point: ${JSON.stringify(last.metrics.metricSample?.[0])}`);
console.log(`A wrapper span: ${JSON.stringify(last.wrapper.spanSample?.[0])}`);
