import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP } from '../../collector/http/dashboard.js';
import { type TestCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { ROOT } from '../support/processes.js';

/** How the collector serves the built page: headers, caching, and its relation to the read token. */

const DIST = join(ROOT, 'dashboard', 'dist');
const TOKEN = 'read-secret';

let collector: TestCollector;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  if (!existsSync(join(DIST, 'index.html'))) throw new Error('dashboard/dist is missing: run "npm run build" first');
  const temp = await tempDir();
  cleanup = temp.cleanup;
  collector = await startTestCollector(temp.dir, { readToken: TOKEN });
});
afterAll(async () => {
  await collector?.close();
  await cleanup?.();
});

describe('the dashboard at /', () => {
  it('serves index.html without the read token, no-cache, with a CSP that allows only its own origin and no inline script', async () => {
    const response = await fetch(`${collector.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).toContain("script-src 'self'");
    expect(DASHBOARD_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await response.text();
    expect(html).not.toMatch(/<script>(?!<)/);
    expect(html).not.toMatch(/https?:\/\//);
    const etag = response.headers.get('etag');
    expect(etag).toBeTruthy();
    expect((await fetch(`${collector.url}/`, { headers: { 'if-none-match': etag ?? '' } })).status).toBe(304);
    expect((await fetch(`${collector.url}/index.html`)).status).toBe(200);
  });

  it('serves the hashed assets named by index.html as immutable; nothing else', async () => {
    const html = readFileSync(join(DIST, 'index.html'), 'utf8');
    const named = [...html.matchAll(/\/assets\/([\w.-]+)/g)].map((match) => match[1]);
    expect(named.length).toBe(2);
    for (const file of readdirSync(join(DIST, 'assets'))) {
      expect(file).toMatch(/-[A-Z0-9]{8}\.(js|css)$/);
      const response = await fetch(`${collector.url}/assets/${file}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(response.headers.get('content-type')).toMatch(file.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      // Nothing loaded from elsewhere at run time (the browser test also watches every request the page makes).
      expect(await response.text()).not.toMatch(/\bimport\(\s*["'`]https?:|@import\s+url\(\s*["']?https?:/i);
    }
    expect((await fetch(`${collector.url}/assets/nope.js`)).status).toBe(404);
    expect((await fetch(`${collector.url}/assets/..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${collector.url}/assets/%2E%2E%2F%2E%2E%2Fpackage.json`)).status).toBe(404);
  });

  it('keeps the API behind the read token', async () => {
    expect((await fetch(`${collector.url}/api/v1/matrix`)).status).toBe(401);
    expect((await fetch(`${collector.url}/api/v1/trends/declarations`)).status).toBe(401);
    expect((await fetch(`${collector.url}/api/v1/matrix`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });
});
