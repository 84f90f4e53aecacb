import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { type Browser, type Watched, launchBrowser, ready, screenshot, watchedPage } from './helpers/browser.js';

/** A collector with a read token: the page shell loads without it, asks for it once, and keeps it for the session. */

const TOKEN = 'the-read-token';
let collector: TestCollector;
let cleanup: () => Promise<void>;
let browser: Browser;
let watched: Watched;
const authorizations: (string | undefined)[] = [];

beforeAll(async () => {
  const temp = await tempDir();
  cleanup = temp.cleanup;
  collector = await startTestCollector(temp.dir, { readToken: TOKEN });
  browser = await launchBrowser();
  watched = await watchedPage(browser.context, collector.url);
  watched.page.setDefaultTimeout(10_000);
  watched.page.on('request', (request) => {
    if (new URL(request.url()).pathname.startsWith('/api/v1/')) authorizations.push(request.headers()['authorization']);
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await collector?.close();
  await cleanup?.();
});

describe('the dashboard with EXTSCOPE_READ_TOKEN', () => {
  it('asks for the token, says clearly when it is wrong, and uses the right one as a bearer header', async () => {
    const { page } = watched;
    await page.goto(`${collector.url}/`);
    await ready(page);
    await expect(page.locator('#token-title').innerText()).resolves.toBe('This collector needs a read token');
    await expect(page.evaluate('document.activeElement.id')).resolves.toBe('token');
    await screenshot(page, 'token');

    await page.fill('#token', 'wrong');
    await page.press('#token', 'Enter');
    await page.locator('#token-title', { hasText: 'not accepted' }).waitFor();
    await expect(page.locator('.token-form [role="alert"]').innerText()).resolves.toContain('refused the token');

    await page.fill('#token', TOKEN);
    await page.press('#token', 'Enter');
    await page.locator('h2', { hasText: 'Support matrix' }).waitFor();
    await expect(page.locator('main').innerText()).resolves.toContain('No agent has reported yet.');
    expect(authorizations).toContain(`Bearer ${TOKEN}`);
    expect(authorizations).toContain('Bearer wrong');
    await expect(page.evaluate('sessionStorage.getItem("extscope.readToken")')).resolves.toBe(TOKEN);
  });

  it('keeps it for the browser session (a reload does not ask again), and forgets it on request', async () => {
    const { page } = watched;
    await page.reload();
    await ready(page);
    await expect(page.locator('#token-title').count()).resolves.toBe(0);
    await expect(page.locator('h2', { hasText: 'Support matrix' }).count()).resolves.toBe(1);
    await page.click('#forget-token');
    await page.locator('#token-title').waitFor();
    await expect(page.evaluate('sessionStorage.getItem("extscope.readToken")')).resolves.toBeNull();
    expect(watched.dialogs).toEqual([]);
    expect(watched.foreign).toEqual([]);
    // The 401s are answers the page expected and handled; nothing else went wrong.
    expect(watched.errors.filter((error) => !error.includes('401'))).toEqual([]);
  });
});
