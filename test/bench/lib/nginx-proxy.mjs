// nginx as a plain reverse proxy in front of one HTTP upstream, the figure `wrap-proxy.mjs` sets `extscope proxy`
// beside: one process (no master), kept-alive upstream connections (idle ones dropped after 4 s, before a Node.js
// upstream closes them: a POST sent on one as it closes is not retried but answered 502), no buffering (SSE
// answers stream as they come), no access log. Its pid, logs and temporary paths in a directory of its own.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NGINX = '/usr/sbin/nginx';

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** nginx forwarding 127.0.0.1:{port} to 127.0.0.1:{upstreamPort}; resolves once it listens. */
export async function startNginxProxy(upstreamPort) {
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: this benchmark compares with nginx (Debian package "nginx")`);
  const dir = mkdtempSync(join(tmpdir(), 'bench-nginx-'));
  const port = await freePort();
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `  ${kind}_temp_path ${dir}/${kind};`).join('\n');
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
${temp}
  access_log off;
  upstream mcp { server 127.0.0.1:${upstreamPort}; keepalive 64; keepalive_timeout 4s; }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://mcp;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_request_buffering off;
    }
  }
}
`,
  );
  const child = spawn(NGINX, ['-c', join(dir, 'nginx.conf'), '-p', dir, '-e', join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk) => (output += chunk));
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${output}`);
    const up = await fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (attempt > 200) throw new Error(`nginx did not listen on 127.0.0.1:${port}: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    child,
    port,
    stop() {
      // SIGTERM, not SIGKILL: nginx's master stops its workers before it exits, where a killed master leaves them
      // running and listening. SIGKILL only if it has not exited within 5 s.
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 5000);
      forced.unref();
      child.once('exit', () => clearTimeout(forced));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
