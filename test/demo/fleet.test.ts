/**
 * demo/fleet.mjs, the demo's clients, on its own: when the servers stop mid-answer (they get SIGTERM together with
 * it when the demo is killed), a request can be left waiting on a response stream that never ends. On SIGTERM the
 * fleet must end such requests itself instead of waiting out the SDK's 60 s request timeout.
 */
import { spawn } from 'node:child_process';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/processes.js';

/** Opens an event stream for every POST and never answers, as a server cut off mid-answer leaves its client. */
/** The method of each request held open. */
const held: string[] = [];
const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
  request.on('end', () => {
    if (request.method !== 'POST') {
      response.writeHead(405).end();
      return;
    }
    const message = JSON.parse(body) as { method?: string };
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.flushHeaders();
    held.push(message.method ?? '?');
  });
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('demo/fleet.mjs', () => {
  it('on SIGTERM, ends the requests its servers never answer and exits 0, long before the 60 s request timeout', { timeout: 60_000 }, async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const targets = { shopA: base, shopB: base, docsLegacy: base, docs: base };
    const fleet = spawn(process.execPath, ['demo/fleet.mjs'], {
      cwd: ROOT,
      env: { ...process.env, DEMO_TARGETS: JSON.stringify(targets) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    fleet.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    fleet.stdout.resume();
    const exited = new Promise<number | null>((resolve) => fleet.once('exit', (code) => resolve(code)));
    try {
      // The seven clients that start at once each wait on a request (their first), and the hand-written one on its call.
      await expect.poll(() => held.length, { timeout: 30_000, message: stderr }).toBeGreaterThanOrEqual(8);
      expect(held).toContain('tools/call');

      fleet.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(resolve, 15_000, 'still running 15 s after SIGTERM'))]);
      expect(code, stderr).toBe(0);
    } finally {
      if (fleet.exitCode === null && fleet.signalCode === null) fleet.kill('SIGKILL');
    }
  });
});
