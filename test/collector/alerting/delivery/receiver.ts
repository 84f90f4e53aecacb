/** A webhook receiver on loopback that keeps every request and answers what the test says. */
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  receivedAtMs: number;
}

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}

/** `answer(n)` gives the status for the n-th request (from 1), 0 for no answer at all (a receiver that hangs); 204 by default. */
export async function startReceiver(answer: (n: number) => number = () => 204): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAtMs: Date.now() });
      const status = answer(requests.length);
      if (status === 0) return;
      response.statusCode = status;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/extscope`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback URL where nothing listens (a port bound, then released). */
export async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/hooks/extscope`;
}

/** Polls `check` until it returns a value (bounded), for state another process or a timer reaches. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, attempts = 300, delayMs = 50): Promise<T> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  throw new Error(`gave up waiting for ${what}`);
}
