/**
 * The child process of the final export over OTLP/HTTP (see FinalExport): reads `{ url, headers, body, timeoutMillis }`
 * (the body base64) on stdin, POSTs the body, and answers `{ status, body }` (the answer's body base64) on stdout.
 * Node's built-in modules only, so it starts in the time of a bare `node`: its parent waits in its `'exit'` event.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

interface PostRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMillis: number;
}

function answer(result: { status?: number; body?: string; error?: string }): void {
  // This process's own stdout: a pipe its parent (the agent) reads, never the MCP server's stream.
  process.stdout.write(JSON.stringify(result));
  process.exit(0);
}

try {
  const input = JSON.parse(readFileSync(0, 'utf8')) as PostRequest;
  const body = Buffer.from(input.body, 'base64');
  const url = new URL(input.url);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const request = send(
    url,
    { method: 'POST', headers: { ...input.headers, 'content-length': String(body.length) }, timeout: input.timeoutMillis },
    (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => answer({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('base64') }));
      response.on('error', (error) => answer({ error: error.message }));
    },
  );
  request.on('timeout', () => request.destroy(new Error(`no answer within ${input.timeoutMillis} ms`)));
  request.on('error', (error) => answer({ error: error.message }));
  request.end(body);
} catch (error) {
  answer({ error: error instanceof Error ? error.message : String(error) });
}
