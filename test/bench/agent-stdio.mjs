// Agent overhead where a stdio MCP server actually runs: in its own process, launched by a client over pipes.
// The same server (agent-stdio-server.mjs) uninstrumented, with the agent's metrics, and with metrics + spans;
// a 2026-07-28 v2 client in this process drives tools/call requests. The figure is the server process's own
// CPU time per request, taken between two marks around the timed requests (the client's work is not in it).
// Variants run in separate processes, interleaved round by round; ratios are paired within a round and the
// median is reported, because this machine's speed drifts between processes.
//   node test/bench/agent-stdio.mjs [rounds=7] [requests=20000] [concurrency=16]
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const server = fileURLToPath(new URL('./agent-stdio-server.mjs', import.meta.url));
const [rounds = 7, requests = 20_000, concurrency = 16] = process.argv.slice(2).map(Number);
const variants = ['bare', 'metrics', 'spans'];
const labels = { bare: 'uninstrumented', metrics: 'agent, metrics only', spans: 'agent, metrics + spans' };
const TASKS = 'io.modelcontextprotocol/tasks';

async function measure(variant) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [server, variant], stderr: 'pipe' });
  const client = new Client({ name: 'bench-client', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } });
  await client.connect(transport);
  const marks = createInterface({ input: transport.stderr })[Symbol.asyncIterator]();
  const cpuNow = async () => {
    process.kill(transport.pid, 'SIGUSR2');
    for (;;) {
      const { value, done } = await marks.next();
      if (done) throw new Error('the server closed its stderr');
      if (value.startsWith('{"cpuMicros"')) return JSON.parse(value).cpuMicros;
    }
  };
  let sent = 0;
  const drive = async (total) => {
    const target = sent + total;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (sent < target) {
        sent++;
        await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      }
    }));
  };
  await drive(Math.min(3000, requests)); // warm-up: JIT, schemas, caches
  const cpuBefore = await cpuNow();
  const started = process.hrtime.bigint();
  await drive(requests);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuMicros = (await cpuNow()) - cpuBefore;
  await client.close();
  return { rps: requests / seconds, cpuMicrosPerRequest: cpuMicros / requests };
}

const cpu = Object.fromEntries(variants.map((variant) => [variant, []]));
const rps = Object.fromEntries(variants.map((variant) => [variant, []]));
for (let round = 0; round < rounds; round++) {
  // The order rotates, so no variant always runs first or last in a round.
  for (const variant of variants.map((_, index) => variants[(index + round) % variants.length])) {
    const result = await measure(variant);
    cpu[variant].push(result.cpuMicrosPerRequest);
    rps[variant].push(result.rps);
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const paired = (series, variant) => series[variant].map((value, round) => value / series.bare[round]);
console.log(`agent overhead in a stdio server process: ${rounds} rounds × ${requests} tools/call requests, ${concurrency} in flight, 2026-07-28 client in another process`);
console.log('variant                    server CPU µs/request   vs bare (paired median, range)   client-side req/s');
for (const variant of variants) {
  const ratios = paired(cpu, variant);
  const range = `${((Math.min(...ratios) - 1) * 100).toFixed(1)}..${((Math.max(...ratios) - 1) * 100).toFixed(1)}%`;
  console.log(`${labels[variant].padEnd(26)} ${median(cpu[variant]).toFixed(1).padStart(21)}   ${`${((median(ratios) - 1) * 100).toFixed(1)}%`.padStart(9)} (${range})`.padEnd(88) + `${median(rps[variant]).toFixed(0).padStart(8)}`);
}
