import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { ROOT } from './processes.js';

/** A child process that prints `{"port": N}` on its first stdout line once it listens. */
export interface ListeningChild {
  child: ChildProcess;
  url: URL;
  stderr: () => string;
  stop(): Promise<void>;
}

/** Starts `command args` and waits for its `{"port": N}` line (on stdout, or on stderr for `fromStderr`); the URL is `http://127.0.0.1:N<path>`. */
export async function startListening(
  command: string,
  args: string[],
  env: Record<string, string>,
  path = '/mcp',
  timeoutMs = 60_000,
  announce: { stream: 'stdout' | 'stderr'; pattern: RegExp } = { stream: 'stdout', pattern: /\{"port":\s*(\d+)\}/ },
): Promise<ListeningChild> {
  const child = spawn(command, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = once(child, 'exit');
  let pending = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} ${args.join(' ')} printed no port within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
    child[announce.stream]!.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const match = announce.pattern.exec(pending);
      if (match !== null) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited (${code}) before listening; stderr: ${stderr}`));
    });
  });
  return {
    child,
    url: new URL(`http://127.0.0.1:${port}${path}`),
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * `extscope proxy --listen 127.0.0.1:0 --upstream <upstream>`, as a process of its own; `options.upstream` replaces
 * the `--upstream` value (the upstream's origin by default) and `options.args` are added.
 */
export function startProxyProcess(
  upstream: URL,
  env: Record<string, string>,
  path = '/mcp',
  options: { upstream?: string; args?: string[] } = {},
): Promise<ListeningChild> {
  const args = [`${ROOT}/dist/bin/extscope.js`, 'proxy', '--listen', '127.0.0.1:0', '--upstream', options.upstream ?? upstream.origin, ...(options.args ?? [])];
  return startListening(process.execPath, args, env, path, 60_000, { stream: 'stderr', pattern: /listening on http:\/\/127\.0\.0\.1:(\d+)/ });
}

/** A 2026-era `tools/call` of the fixtures' `echo` tool from `client`, declaring no extensions: the JSON-RPC body. */
export const toolsCall = (id: number, client: string): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'echo',
      arguments: {},
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: client, version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': { extensions: {} },
      },
    },
  });
