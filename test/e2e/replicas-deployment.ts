/**
 * A small deployment for the replicas test: N collector replicas (the built CLI, as child processes) on one
 * PostgreSQL database, each on a port of its own that it keeps across restarts, and nginx (Debian's package) on
 * deploy/nginx.conf in front, on a free loopback port, with its own pid and temp paths in a temp directory.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ChildCollector, spawnCollector } from '../collector/helpers/collector.js';
import { freePort } from '../support/counting-clients.js';
import { NGINX, nginxConfig, stopNginx } from '../support/nginx.js';

export interface Replica {
  port: number;
  url: string;
  running: ChildCollector | undefined;
}

export interface Deployment {
  /** nginx's URL: what the agents export to. */
  url: string;
  replicas: Replica[];
  kill(index: number): Promise<void>;
  restart(index: number): Promise<void>;
  /** Every request nginx passed on, in order (from its access log): method, path, status, the replicas tried. */
  requests(): Promise<{ method: string; path: string; status: number; upstreams: string[] }[]>;
  stop(): Promise<void>;
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

export async function startDeployment(dir: string, dbUrl: string, count: number): Promise<Deployment> {
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: the replicas test needs nginx (Debian package "nginx"; .ci/run installs it)`);
  const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
  const replicas: Replica[] = ports.map((port) => ({ port, url: `http://127.0.0.1:${port}`, running: undefined }));
  const start = async (replica: Replica): Promise<void> => {
    replica.running = await spawnCollector(dbUrl, ['--port', String(replica.port), '--grpc-port', '0']);
  };
  let nginx: ChildProcess | undefined;
  const deployment: Deployment = {
    url: '',
    replicas,
    async kill(index) {
      const replica = replicas[index] as Replica;
      await stopChild(replica.running?.child);
      replica.running = undefined;
    },
    async restart(index) {
      await start(replicas[index] as Replica);
    },
    async requests() {
      const log = await readFile(join(dir, 'nginx', 'access.log'), 'utf8');
      return log
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => {
          const [method = '', path = '', status = '0', ...upstreams] = line.split(' ');
          return { method, path, status: Number(status), upstreams: upstreams.join('').split(',') };
        });
    },
    async stop() {
      await stopNginx(nginx);
      await Promise.all(replicas.map((replica) => stopChild(replica.running?.child)));
    },
  };
  try {
    // Started together: the migrations run once, under the database's lock.
    await Promise.all(replicas.map(start));
    const port = await freePort();
    await mkdir(join(dir, 'nginx'), { recursive: true });
    const conf = join(dir, 'nginx', 'nginx.conf');
    await writeFile(
      conf,
      nginxConfig(
        join(dir, 'nginx'),
        port,
        replicas.map((replica) => `127.0.0.1:${replica.port}`),
      ),
    );
    let output = '';
    nginx = spawn(NGINX, ['-c', conf, '-p', join(dir, 'nginx'), '-e', join(dir, 'nginx', 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
    nginx.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    nginx.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    deployment.url = `http://127.0.0.1:${port}`;
    for (let attempt = 0; ; attempt++) {
      if (nginx.exitCode !== null) throw new Error(`nginx exited (${nginx.exitCode}): ${output}`);
      const ok = await fetch(`${deployment.url}/healthz`).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) break;
      if (attempt > 200) throw new Error(`nginx did not answer on ${deployment.url}: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return deployment;
  } catch (error) {
    await deployment.stop();
    throw error;
  }
}
