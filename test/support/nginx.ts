/**
 * deploy/nginx.conf, made runnable by a test: the same upstream and proxy settings, with the replicas' loopback
 * addresses for its `server collector-N:4318` lines (and as many tries), a loopback listen port, and the pid, logs and temporary paths
 * in a directory of the test's own. Tests run what is deployed, so the two cannot drift apart.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const NGINX = '/usr/sbin/nginx';
const DEPLOYED = fileURLToPath(new URL('../../deploy/nginx.conf', import.meta.url));

/** The deployed configuration with `upstreams` (host:port) as its replicas, listening on 127.0.0.1:`port`. */
export function nginxConfig(dir: string, port: number, upstreams: readonly string[]): string {
  const deployed = readFileSync(DEPLOYED, 'utf8');
  const servers = [...deployed.matchAll(/^(\s*)server collector-\d+:4318( [^;]*)?;\n/gm)];
  const first = servers[0];
  if (first === undefined || !/^\s*listen 4318;$/m.test(deployed))
    throw new Error(`${DEPLOYED} no longer has "server collector-N:4318" lines and "listen 4318": update test/support/nginx.ts`);
  const indent = first[1] ?? '';
  const options = first[2] ?? '';
  const replicas = upstreams.map((upstream) => `${indent}server ${upstream}${options};\n`).join('');
  return (
    deployed
      .replace(/^worker_processes .*$/m, `daemon off;\nworker_processes 1;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log warn;`)
      .replace(/^(\s*)server collector-\d+:4318( [^;]*)?;\n/gm, (line) => (line === first[0] ? replicas : ''))
      .replace(/^(\s*)listen 4318;$/m, `$1listen 127.0.0.1:${port};`)
      // One try per replica, as the deployed file has for its two.
      .replace(/proxy_next_upstream_tries \d+;/, `proxy_next_upstream_tries ${upstreams.length};`)
      .replace(
        /^http \{$/m,
        [
          'http {',
          ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${dir}/${kind === 'client_body' ? 'body' : kind};`),
          "  log_format upstream '$request_method $uri $status $upstream_addr';",
          `  access_log ${dir}/access.log upstream;`,
        ].join('\n'),
      )
  );
}

/**
 * Stops an nginx master: SIGTERM, not SIGKILL, because the master stops its workers before it exits, where a killed
 * master leaves them running and listening. SIGKILL only if it has not exited within 5 s.
 */
export async function stopNginx(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const forced = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(forced);
}

/** nginx (Debian's package) on the deployed configuration, in `dir`, in front of `upstreams`; resolves once it answers `/healthz`. */
export async function startNginx(
  dir: string,
  port: number,
  upstreams: readonly string[],
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: this test needs nginx (Debian package "nginx"; .ci/run installs it)`);
  await mkdir(dir, { recursive: true });
  const conf = join(dir, 'nginx.conf');
  await writeFile(conf, nginxConfig(dir, port, upstreams));
  let output = '';
  const child = spawn(NGINX, ['-c', conf, '-p', dir, '-e', join(dir, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const stop = (): Promise<void> => stopNginx(child);
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${output}`);
    const ok = await fetch(`${url}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) break;
    if (attempt > 200) {
      await stop();
      throw new Error(`nginx did not answer on ${url}: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url, child, stop };
}
