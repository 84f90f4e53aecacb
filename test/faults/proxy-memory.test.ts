import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import { createGzip } from 'node:zlib';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type OtlpSink, startOtlpSink } from '../support/otlp-sink.js';
import { ROOT, agentEnv, fixture } from '../support/processes.js';
import { type ListeningChild, startListening, startProxyProcess } from '../support/servers.js';

// The bound stated in docs/wrap-and-proxy.md for `extscope proxy` under a flood of large bodies.
const RSS_BOUND = 300 * 1024 * 1024;
const FLOODERS = 256;
const FLOOD_MIB = 15;

// Each test its own sink: its counts are its own.
let sink: OtlpSink;
const children: ListeningChild[] = [];
beforeEach(async () => {
  sink = await startOtlpSink();
});
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => child.stop()));
  await sink.close();
});

async function proxied(service: string): Promise<{ upstream: ListeningChild; proxy: ListeningChild }> {
  const upstream = await startListening(process.execPath, [fixture('drain-http.mjs')], agentEnv(sink.url));
  children.push(upstream);
  const proxy = await startProxyProcess(upstream.url, agentEnv(sink.url, { OTEL_SERVICE_NAME: service }));
  children.push(proxy);
  return { upstream, proxy };
}

async function status(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(text);
  if (match === null) throw new Error(`no ${field} for ${pid}`);
  return Number(match[1]) * 1024;
}

function cpuSeconds(pid: number): Promise<number> {
  return readFile(`/proc/${pid}/stat`, 'utf8').then((text) => {
    const fields = text.split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  });
}

/** The process's CPU seconds once it has stopped working (decoding goes on in zlib's threads after the answers). */
async function cpuWhenIdle(pid: number): Promise<number> {
  let last = await cpuSeconds(pid);
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = await cpuSeconds(pid);
    if (now - last < 0.05) return now;
    last = now;
  }
  return last;
}

const MODERN_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'echo',
};
const meta = (client: string) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: client, version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: {} },
});
const call = (id: number, client: string) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', _meta: meta(client), arguments: { text: 'hi' } } });

// Kept alive, as MCP clients keep their connections.
const keepAlive = new http.Agent({ keepAlive: true });
afterAll(() => keepAlive.destroy());

function post(url: URL, body: Buffer | string, headers: Record<string, string> = MODERN_HEADERS): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers, agent: keepAlive }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** `head`, `mib` MiB of `a`, `tail`, gzip'd as it is made (the whole is never in memory). */
async function gzipBomb(head: string, mib: number, tail: string): Promise<Buffer> {
  const gzip = createGzip();
  const chunks: Buffer[] = [];
  gzip.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = once(gzip, 'end');
  const block = Buffer.alloc(1024 * 1024, 'a');
  gzip.write(head);
  for (let i = 0; i < mib; i++) if (!gzip.write(block)) await once(gzip, 'drain');
  gzip.end(tail);
  await ended;
  return Buffer.concat(chunks);
}

describe('extscope proxy: memory under large bodies', () => {
  it(`${FLOODERS} concurrent ${FLOOD_MIB} MiB POSTs keep the proxy under 300 MB RSS, honest requests alongside answer within 1 s (9 in 10, none in seconds) and are counted exactly, every flood body is counted or counted unread`, async () => {
    const service = 'proxy-flood';
    const { proxy } = await proxied(service);
    const pid = proxy.child.pid!;
    expect((await post(proxy.url, call(0, 'honest'))).status).toBe(200);

    const flood = spawn(process.execPath, [join(ROOT, 'test/faults/proxy-flood.mjs'), proxy.url.port, String(FLOODERS), String(FLOOD_MIB)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let floodOutput = '';
    flood.stdout.on('data', (chunk: Buffer) => (floodOutput += chunk.toString('utf8')));
    const floodDone = once(flood, 'exit');
    let flooding = true;
    void floodDone.then(() => (flooding = false));

    // The RSS is sampled throughout; past the bound the flood stops at once (the old proxy took gigabytes).
    let peak = 0;
    const sampler = (async () => {
      while (flooding) {
        peak = Math.max(peak, await status(pid, 'VmRSS'));
        if (peak > RSS_BOUND) flood.kill('SIGKILL');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const latencies: number[] = [];
    let honest = 1;
    // Honest requests while the flood is on (at most 60 s of it).
    const deadline = Date.now() + 60_000;
    await new Promise((resolve) => setTimeout(resolve, 300));
    while (flooding && Date.now() < deadline) {
      const start = performance.now();
      const answer = await post(proxy.url, call(honest, 'honest'));
      latencies.push(performance.now() - start);
      expect(answer.status).toBe(200);
      expect(answer.body).toContain('"text":"hi"');
      honest++;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await floodDone;
    await sampler;
    peak = Math.max(peak, await status(pid, 'VmHWM'));

    expect(peak, `peak RSS ${Math.round(peak / 1048576)} MB`).toBeLessThan(RSS_BOUND);
    // Every flood body reached the upstream whole (it answers 413 once it has read all of it).
    expect(JSON.parse(floodOutput)).toEqual({ statuses: { 413: FLOODERS }, failed: 0 });
    expect(latencies.length, 'honest requests made while the flood was on').toBeGreaterThanOrEqual(5);
    // Within a second, as the issue asks; on two shared cores, with the flood client, the proxy and the upstream
    // each wanting a core, one request in ten may wait longer (the old proxy: 14.8 s), never seconds.
    const sorted = [...latencies].sort((a, b) => a - b);
    const shown = `honest latencies (ms): ${latencies.map(Math.round).join(' ')}`;
    expect(sorted[Math.floor(sorted.length * 0.9)], shown).toBeLessThan(1000);
    expect(sorted.at(-1), shown).toBeLessThan(2500);
    // Small bodies always fit (the budget keeps room for them): counted exactly. A flood body is counted (as the
    // upstream's error) when the proxy could keep it whole, else counted once as unread.
    await expect.poll(() => sink.sum('extscope.requests', { 'extscope.client.name': 'honest' }), { timeout: 15_000 }).toBe(honest);
    const floodCounted = () => sink.sum('extscope.requests', { 'extscope.client.name': 'flood' });
    const unread = () => sink.sum('extscope.agent.errors', { 'extscope.agent.stage': 'wire_request_unread' });
    await expect.poll(() => floodCounted() + unread(), { timeout: 15_000 }).toBe(FLOODERS);
    expect(unread()).toBeGreaterThan(0);
    // The budget is whole again once the flood is over: a 2 MiB body is read (the upstream refuses it, an error counted).
    const large = call(honest + 1, 'after-flood').replace('"hi"', `"${'b'.repeat(2 * 1024 * 1024)}"`);
    expect((await post(proxy.url, large)).status).toBe(413);
    await expect.poll(() => sink.sum('extscope.requests', { 'extscope.client.name': 'after-flood', 'extscope.outcome': 'error' }), { timeout: 15_000 }).toBe(1);
    expect(unread()).toBe(FLOODERS - floodCounted());
  }, 180_000);

  it('inflates a compressed body only as far as it reads it: 20 gzip bombs (512 MiB each inflated) cost the proxy under 3 s of CPU', async () => {
    const service = 'proxy-gzip';
    const { proxy } = await proxied(service);
    const pid = proxy.child.pid!;
    // 512 MiB of a JSON string's characters, gzip'd to about half a megabyte.
    const bomb = await gzipBomb(call(1, 'bomb').replace(/"hi"\}\}\}$/, '"'), 512, '"}}}');
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const before = await cpuSeconds(pid);
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(proxy.url, bomb, { ...MODERN_HEADERS, 'content-encoding': 'gzip' })));
    const spent = (await cpuWhenIdle(pid)) - before;
    // The upstream got every compressed body whole (its 1 MiB door lets them in: the SDK refuses what it cannot read).
    expect(answers.every((answer) => answer.status > 0)).toBe(true);
    expect(spent, `proxy CPU seconds for 20 bombs`).toBeLessThan(3);
    const honest = await post(proxy.url, call(2, 'after-bombs'));
    expect(honest.status).toBe(200);
    await expect.poll(() => sink.sum('extscope.requests', { 'extscope.client.name': 'after-bombs' }), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => sink.sum('extscope.agent.errors', { 'extscope.agent.stage': 'wire_request_unread' }), { timeout: 15_000 }).toBe(20);
  }, 120_000);
});
