#!/usr/bin/env node
// Takes the README's screenshot of the support matrix (docs/img/matrix.png) from the demo fleet, in Debian's
// Chromium (playwright-core; no browser is downloaded). Starts `scripts/demo.mjs --port 0`, waits until every
// client of the fleet has a row, shoots the matrix grouped by client version, and stops the demo.
//   node scripts/demo-screenshot.mjs [output=docs/img/matrix.png]
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const output = process.argv[2] ?? join(ROOT, 'docs', 'img', 'matrix.png');
if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing (apt-get install chromium)`);

const demo = spawn(process.execPath, ['scripts/demo.mjs', '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
const exited = new Promise((resolve) => demo.once('exit', resolve));
let stdout = '';
demo.stdout.on('data', (chunk) => (stdout += chunk));
const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const profile = await mkdtemp(join(tmpdir(), 'extscope-screenshot-'));
try {
  let url;
  for (let attempt = 0; attempt < 120 && url === undefined; attempt++) {
    await wait(500);
    url = /collector on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout)?.[1];
  }
  if (url === undefined) throw new Error(`the demo did not start: ${stdout}`);
  // Long enough for acme-desktop 1.5.0 to roll out and every client to have traffic.
  for (let attempt = 0; attempt < 240; attempt++) {
    await wait(500);
    const matrix = await (await fetch(`${url}/api/v1/matrix?group=client_version`)).json();
    if (matrix.rows.length >= 7 && matrix.rows.every((row) => row.requests >= 5)) break;
  }
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    viewport: { width: 1180, height: 1200 },
    deviceScaleFactor: 1,
    colorScheme: 'light',
  });
  const page = await context.newPage();
  await page.goto(`${url}/?group=client_version&range=15m`);
  await page.locator('body[data-ready]').waitFor({ state: 'attached', timeout: 30_000 });
  // The legend and the table: the part of the page that says what extscope measures.
  const top = await page.locator('h2', { hasText: 'Support matrix' }).first().boundingBox();
  const table = await page.locator('table').first().boundingBox();
  const clip = { x: 0, y: Math.max(0, top.y - 12), width: 1180, height: table.y + table.height - top.y + 24 };
  await page.screenshot({ path: output, clip, fullPage: true });
  await context.close();
  process.stdout.write(`${output}\n`);
} finally {
  demo.kill('SIGINT');
  await exited;
  await rm(profile, { recursive: true, force: true });
}
