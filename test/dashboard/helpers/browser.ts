import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, type Page, chromium } from 'playwright-core';
import { ROOT } from '../../support/processes.js';

/** Debian's Chromium, driven by playwright-core; never a downloaded browser. */
export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = join(ROOT, 'test-artifacts', 'dashboard');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-quic',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh profile each time. Fails (never skips) when Chromium is not installed. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the dashboard tests need Debian's chromium (apt-get install -y --no-install-recommends chromium)`);
  }
  const profile = await mkdtemp(join(tmpdir(), 'extscope-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1366, height: 768 },
    acceptDownloads: true,
    timeout: 30_000,
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export interface Watched {
  page: Page;
  dialogs: string[];
  /** Console errors (a CSP violation is one), uncaught exceptions. */
  errors: string[];
  /** Requests to any origin but the collector's. */
  foreign: string[];
}

/** A page whose dialogs, errors and requests elsewhere are recorded for the test to assert on. */
export async function watchedPage(context: BrowserContext, origin: string): Promise<Watched> {
  const page = await context.newPage();
  const watched: Watched = { page, dialogs: [], errors: [], foreign: [] };
  page.on('dialog', (dialog) => {
    watched.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => undefined);
  });
  page.on('console', (message) => {
    if (message.type() === 'error') watched.errors.push(message.text());
  });
  page.on('pageerror', (error) => watched.errors.push(String(error)));
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:')) watched.foreign.push(url);
  });
  return watched;
}

/** Waits until the view has rendered its data (the page sets body[data-ready] after each load). */
export async function ready(page: Page): Promise<void> {
  // A locator, not waitForFunction: the page's CSP forbids evaluating strings in it.
  await page.locator('body[data-ready]').waitFor({ state: 'attached', timeout: 15_000 });
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}
