// The demo's MCP clients: real SDK clients (v2 @modelcontextprotocol/client) with different names, versions,
// protocol eras and extension maps, plus one hand-written HTTP client that sends no client info, each calling its
// servers every second or two until SIGTERM/SIGINT. Targets come from DEMO_TARGETS (JSON, written by
// scripts/demo.mjs): { shopA, shopB, docsLegacy, docs } base URLs.
import { setTimeout as delay } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { z } from 'zod';

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const targets = JSON.parse(process.env.DEMO_TARGETS ?? '{}');
/** Seconds after start at which acme-desktop 1.5.0 rolls out (it no longer declares search). */
const UPGRADE_AFTER_MS = Number(process.env.DEMO_UPGRADE_AFTER_MS ?? 20_000);
const modern = { versionNegotiation: { mode: 'auto' } };

/**
 * Aborted on SIGTERM/SIGINT. It ends every wait and every request in flight: a request whose response stream a
 * stopping server cut would otherwise wait out the SDK's 60 s request timeout and keep this process alive that long.
 */
const stop = new AbortController();
const stopping = () => stop.signal.aborted;
/** Waits `ms`, or until the fleet stops (at once if it has). */
const sleep = (ms) => delay(ms, undefined, { signal: stop.signal }).catch(() => undefined);
const jitter = (ms) => ms * (0.7 + Math.random() * 0.6);

/**
 * One client: connects, then runs `work` every `everyMs` until the demo stops; reconnects after a failure
 * (a server restarting), and closes its connection at the end.
 */
async function client({ name, version, extensions, era, url, everyMs, startAfterMs = 0, work }) {
  if (startAfterMs > 0) await sleep(startAfterMs);
  while (!stopping()) {
    const info = { name, version };
    const options = { capabilities: extensions === undefined ? {} : { extensions }, ...(era === 'modern' ? modern : {}) };
    const mcp = new Client(info, options);
    // The transport, not the client: during the `server/discover` probe the client does not hold it yet.
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const closeOnStop = () => void transport.close().catch(() => undefined);
    stop.signal.addEventListener('abort', closeOnStop, { once: true });
    try {
      await mcp.connect(transport);
      while (!stopping()) {
        await work(mcp);
        await sleep(jitter(everyMs));
      }
    } catch (error) {
      if (!stopping()) {
        process.stderr.write(`demo client ${name}@${version}: ${error.message}; reconnecting\n`);
        await sleep(2000);
      }
    } finally {
      stop.signal.removeEventListener('abort', closeOnStop);
      await mcp.close().catch(() => undefined);
    }
  }
}

const search = (mcp) => mcp.callTool({ name: 'search', arguments: { query: 'lamps' } });
const mostlySearch = async (mcp) => {
  await search(mcp);
  // Now and then a tool that throws: a tool error, not a protocol error.
  if (Math.random() < 0.15) await mcp.callTool({ name: 'checkout', arguments: {} });
};

/**
 * A 2026-07-28 request by hand, as a script or another language's client might send it: capabilities in the
 * envelope, but no clientInfo.
 */
let rawId = 0;
async function anonymous(url) {
  while (!stopping()) {
    const body = {
      jsonrpc: '2.0',
      id: ++rawId,
      method: 'tools/call',
      params: {
        name: 'search',
        arguments: { query: 'anonymous' },
        _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } },
      },
    };
    await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'search',
      },
      body: JSON.stringify(body),
      signal: stop.signal,
    })
      .then((response) => response.arrayBuffer())
      .catch((error) => {
        if (!stopping()) process.stderr.write(`demo anonymous client: ${error.message}\n`);
      });
    await sleep(jitter(2500));
  }
}

const runs = [
  // 2026-07-28 clients, per-request envelopes, against both shop instances (one lacks search).
  client({
    name: 'acme-desktop',
    version: '1.4.0',
    extensions: { [TASKS]: {}, [SEARCH]: { limit: 10 } },
    era: 'modern',
    url: `${targets.shopA}/mcp`,
    everyMs: 1200,
    work: mostlySearch,
  }),
  client({
    name: 'acme-desktop',
    version: '1.4.0',
    extensions: { [TASKS]: {}, [SEARCH]: { limit: 10 } },
    era: 'modern',
    url: `${targets.shopB}/mcp`,
    everyMs: 1500,
    work: search,
  }),
  // The next version rolls out later and no longer declares search.
  client({
    name: 'acme-desktop',
    version: '1.5.0',
    extensions: { [TASKS]: {} },
    era: 'modern',
    url: `${targets.shopA}/mcp`,
    everyMs: 1000,
    startAfterMs: UPGRADE_AFTER_MS,
    work: mostlySearch,
  }),
  // A 2025-era client: capabilities once, in initialize, on a session.
  client({ name: 'orbit-cli', version: '0.9.2', extensions: { [SEARCH]: {} }, era: 'legacy', url: `${targets.shopA}/session`, everyMs: 1800, work: search }),
  client({ name: 'orbit-cli', version: '0.9.2', extensions: { [SEARCH]: {} }, era: 'legacy', url: targets.docsLegacy, everyMs: 2000, work: search }),
  // A client that declares no extensions at all, on the v2 CommonJS server.
  client({ name: 'notes-app', version: '3.0.0', extensions: {}, era: 'modern', url: targets.docs, everyMs: 1600, work: search }),
  // A 2025-era client over stateless HTTP: its calls land on fresh server instances, so their declaration is unknown.
  client({ name: 'notes-app', version: '2.7.1', extensions: { [SEARCH]: {} }, era: 'legacy', url: targets.docs, everyMs: 2200, work: search }),
  // A client that calls a method requiring com.example/replay without declaring it: -32021.
  client({
    name: 'ledger-bot',
    version: '0.4.0',
    extensions: { [TASKS]: {} },
    era: 'modern',
    url: `${targets.shopB}/mcp`,
    everyMs: 1700,
    work: async (mcp) => {
      await search(mcp);
      await mcp.request({ method: 'com.example/replayable', params: {} }, z.any()).catch(() => undefined);
    },
  }),
  anonymous(`${targets.shopA}/mcp`),
];

const onSignal = () => stop.abort();
process.once('SIGTERM', onSignal);
process.once('SIGINT', onSignal);
await Promise.all(runs);
