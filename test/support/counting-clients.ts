import { createServer } from 'node:net';
import { Client, StreamableHTTPClientTransport, type Transport } from '@modelcontextprotocol/client';

const TASKS = 'io.modelcontextprotocol/tasks';

/** A port nothing listens on now, so a collector can be started on it twice (the agent's endpoint stays put). */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * A real MCP client declaring the tasks extension, whose transport counts the answers the server gave it
 * (responses to its requests: `server/discover` or `initialize` included), which is what the collector must end
 * up counting for it. `modern`: 2026-07-28 through version negotiation; otherwise the 2025 era.
 */
export async function countingClient(name: string, url: URL, modern = true) {
  const client = new Client(
    { name, version: '1.0.0' },
    { capabilities: { extensions: { [TASKS]: {} } }, ...(modern && { versionNegotiation: { mode: 'auto' as const } }) },
  );
  const transport = new StreamableHTTPClientTransport(url);
  const counted = { answers: 0 };
  // The client (re)assigns the transport's onmessage (the 2026-07-28 negotiation does so after its probe):
  // count through whatever it assigns.
  let deliver: Transport['onmessage'];
  Object.defineProperty(transport, 'onmessage', {
    get: () => deliver,
    set: (handler: Transport['onmessage']) => {
      deliver =
        handler &&
        ((message) => {
          if ('id' in message && ('result' in message || 'error' in message)) counted.answers++;
          handler(message);
        });
    },
  });
  await client.connect(transport);
  return { name, client, counted };
}

/** Requests per client row of the last hour's matrix (empty while the collector cannot answer). */
export async function matrixRequests(collectorUrl: string): Promise<Record<string, number>> {
  const response = await fetch(`${collectorUrl}/api/v1/matrix?group=client&from=-1h`);
  if (response.status !== 200) return {};
  const body = (await response.json()) as { rows: { client: string; requests: number }[] };
  return Object.fromEntries(body.rows.map((row) => [row.client, row.requests]));
}
