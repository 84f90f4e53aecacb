/**
 * Real daemons for tests (Alertmanager, Prometheus from Debian's packages): each on a free loopback port with
 * its own configuration and storage in a temporary directory, stopped and removed afterwards. A binary that is
 * not installed fails the test with the package to install.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function requireBinary(path: string, debianPackage: string): string {
  if (!existsSync(path)) throw new Error(`${path} is missing: install Debian's ${debianPackage} package (apt-get install ${debianPackage}); .ci/run does`);
  return path;
}

/** A port nobody listens on right now (bound and released); a daemon that then loses the race is restarted by {@link startDaemon}. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface Daemon {
  url: string;
  dir: string;
  output(): string;
  stop(): Promise<void>;
}

export interface DaemonSpec {
  name: string;
  binary: string;
  /** Writes the configuration into `dir` and returns the arguments for a daemon on `port`. */
  prepare(dir: string, port: number): Promise<string[]>;
  /** Path answering 200 once the daemon serves. */
  readyPath: string;
}

async function until(check: () => Promise<boolean>, what: string, attempts = 200, delayMs = 100): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function startDaemon(spec: DaemonSpec): Promise<Daemon> {
  const dir = await mkdtemp(join(tmpdir(), `extscope-${spec.name}-`));
  let lastError: unknown;
  for (let tries = 0; tries < 3; tries++) {
    const port = await freePort();
    const args = await spec.prepare(dir, port);
    const child: ChildProcess = spawn(spec.binary, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let exited = false;
    const exit = new Promise<void>((resolve) => child.once('exit', () => ((exited = true), resolve())));
    const url = `http://127.0.0.1:${port}`;
    try {
      await until(async () => {
        if (exited) throw new Error(`${spec.name} exited before serving:\n${output}`);
        return fetch(`${url}${spec.readyPath}`).then(
          (response) => response.ok,
          () => false,
        );
      }, `${spec.name} on ${url}`);
    } catch (error) {
      lastError = error;
      child.kill('SIGKILL');
      await exit;
      // Only a lost race for the port is worth another try.
      if (!/address already in use/.test(output)) break;
      continue;
    }
    return {
      url,
      dir,
      output: () => output,
      async stop() {
        if (!exited) {
          child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exit;
          clearTimeout(killer);
        }
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  await rm(dir, { recursive: true, force: true });
  throw lastError;
}

export { until };
