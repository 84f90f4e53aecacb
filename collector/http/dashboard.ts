import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';

/**
 * The dashboard page at `/`: the static files `npm run build` writes to `dashboard/dist/`, read into memory at
 * start (a handful of files; nothing is resolved from a request path, so nothing outside them can be served).
 *
 * The page shell is public, also when `EXTSCOPE_READ_TOKEN` is set: it is the same code for everyone and holds
 * no telemetry. Every figure it shows comes from `/api/v1/*`, which stays behind the read guard; the page asks
 * for the token and sends it as a bearer header.
 *
 * Caching: `/assets/*` carry a content hash in their names and are immutable; `index.html` is `no-cache`
 * (revalidated by ETag), so a new build is picked up at the next load.
 */

/** Its own origin only, no inline script or style, never framed. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export interface DashboardOptions {
  /** Where the built page is; default: `dashboard/dist` of this package. */
  dir?: string;
}

/** `dashboard/dist` next to the package root, from the sources (collector/http/) or the build (dist/collector/http/). */
function findDashboardDir(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < 6; level++) {
    const candidate = join(dir, 'dashboard', 'dist');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    dir = dirname(dir);
  }
  return undefined;
}

function load(dir: string): { index: Asset; assets: Map<string, Asset> } | undefined {
  if (!existsSync(join(dir, 'index.html'))) return undefined;
  const read = (path: string): Asset => {
    const body = readFileSync(path);
    return { body, type: TYPES[extname(path)] ?? 'application/octet-stream', etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
  };
  const assets = new Map<string, Asset>();
  const assetsDir = join(dir, 'assets');
  if (existsSync(assetsDir)) {
    for (const entry of readdirSync(assetsDir, { withFileTypes: true })) if (entry.isFile()) assets.set(entry.name, read(join(assetsDir, entry.name)));
  }
  return { index: read(join(dir, 'index.html')), assets };
}

function send(reply: FastifyReply, asset: Asset, ifNoneMatch: string | undefined, cacheControl: string): FastifyReply {
  reply.header('content-type', asset.type).header('cache-control', cacheControl).header('etag', asset.etag).header('x-content-type-options', 'nosniff');
  if (ifNoneMatch !== undefined && ifNoneMatch.split(/\s*,\s*/).includes(asset.etag)) return reply.code(304).send();
  return reply.send(asset.body);
}

export const dashboardRoutes: FastifyPluginAsync<DashboardOptions> = async (app, options) => {
  const dir = options.dir ?? findDashboardDir();
  const files = dir === undefined ? undefined : load(dir);

  const page = async (request: { headers: { 'if-none-match'?: string | undefined } }, reply: FastifyReply): Promise<FastifyReply> => {
    reply.header('content-security-policy', DASHBOARD_CSP).header('referrer-policy', 'no-referrer').header('x-frame-options', 'DENY');
    if (files === undefined) {
      return reply
        .code(503)
        .header('content-type', 'text/plain; charset=utf-8')
        .header('cache-control', 'no-store')
        .send('The dashboard is not built: run `npm run build` in the extscope package. The query API is at /api/v1/.\n');
    }
    return send(reply, files.index, request.headers['if-none-match'], 'no-cache');
  };
  app.get('/', page);
  app.get('/index.html', page);

  app.get<{ Params: { file: string } }>('/assets/:file', async (request, reply) => {
    const asset = files?.assets.get(request.params.file);
    if (asset === undefined) return reply.code(404).header('cache-control', 'no-store').send({ statusCode: 404, error: 'Not Found', message: 'no such asset' });
    return send(reply, asset, request.headers['if-none-match'], 'public, max-age=31536000, immutable');
  });
};
