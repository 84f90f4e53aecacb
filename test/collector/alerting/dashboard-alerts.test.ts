/**
 * The dashboard's alerts view in real headless Chromium against a real collector whose rules fired: active and
 * resolved alerts, hostile service and client names as text, and each alert's link to the view of its cause.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNBOOKS_URL } from '../../../collector/alerting/runbooks.js';
import { type Browser, type Watched, launchBrowser, ready, screenshot, watchedPage } from '../../dashboard/helpers/browser.js';
import { type TestCollector, tempDir } from '../helpers/collector.js';
import { alertingCollector, send } from './helpers.js';

const A = 'com.example/a';
const B = 'com.example/b';
const EVIL_SERVICE = '<script>alert(2)</script>';
const EVIL_CLIENT = 'com.evil/<img src=x onerror=alert(1)>';
const MINUTE = 60_000;
const NOW = Date.UTC(2026, 5, 1, 12, 0, 30);

const RULES = `rules:
  - { name: skew, kind: advertisement_skew, for: 0s, severity: critical }
  - { name: regression, kind: client_regression, minRequests: 1, annotations: { runbook_url: "javascript:alert(3)" } }
  - { name: stale_instance, kind: stale_instance, after: 10m, minUptime: 0s }
`;

describe('dashboard: alerts view', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  let browser: Browser;
  let watched: Watched;
  let page: Page;

  beforeAll(async () => {
    temp = await tempDir();
    const started = await alertingCollector(temp.dir, RULES, NOW - 20 * MINUTE);
    collector = started.collector;
    const clock = started.clock;
    const url = collector.url;
    // An instance goes silent (stale), then reports again (resolved).
    await send(url, { service: 'cart', instance: 'cart-1', atMs: clock.now, requests: [{ count: 1 }] });
    clock.now = NOW - 5 * MINUTE;
    await collector.alerting.evaluate();
    await send(url, { service: 'cart', instance: 'cart-1', atMs: clock.now, requests: [{ count: 1 }] });
    // Skew on the service with a hostile name; a regression of the client with a hostile name.
    await send(url, { service: EVIL_SERVICE, instance: 'evil-1', atMs: clock.now, advertised: [{ id: A }] });
    await send(url, { service: EVIL_SERVICE, instance: 'evil-2', atMs: clock.now, advertised: [{ id: A }, { id: B }] });
    await send(url, {
      service: 'shop',
      atMs: NOW - 10 * MINUTE,
      requests: [{ client: EVIL_CLIENT, version: '1.0.0', count: 2 }],
      extensions: [{ id: A, client: EVIL_CLIENT, version: '1.0.0', count: 2, clientDeclared: true, serverDeclared: true }],
    });
    await send(url, { service: 'shop', atMs: NOW - 4 * MINUTE, requests: [{ client: EVIL_CLIENT, version: '1.1.0', count: 3 }] });
    clock.now = NOW;
    await collector.alerting.evaluate();

    browser = await launchBrowser();
    watched = await watchedPage(browser.context, url);
    page = watched.page;
  });
  afterAll(async () => {
    await browser?.close();
    await collector?.close();
    await temp?.cleanup();
  });

  async function open(search: string): Promise<void> {
    await page.goto(`${collector.url}/${search}`);
    await ready(page);
  }

  const active = () => page.locator('table[data-alerts="active"] tbody tr');
  const resolved = () => page.locator('table[data-alerts="resolved"] tbody tr');

  it('lists firing alerts and resolved ones, hostile names as text', async () => {
    await open('?view=alerts');
    await screenshot(page, 'alerts-firing');
    await expect(page.getByRole('heading', { name: 'Firing and pending (2)' }).count()).resolves.toBe(1);
    await expect(active().count()).resolves.toBe(2);
    const skew = active().filter({ hasText: 'advertisement_skew' });
    await expect(skew.locator('.alert-summary').innerText()).resolves.toBe(`1 of 2 live instances of ${EVIL_SERVICE} lacks ${B}: evil-1`);
    await expect(skew.locator('.label').allInnerTexts()).resolves.toEqual([`service=${EVIL_SERVICE}`]);
    await expect(skew.locator('td').first().innerText()).resolves.toContain('firing');
    await expect(skew.locator('td').first().innerText()).resolves.toContain('critical');
    const regression = active().filter({ hasText: 'client_regression' });
    await expect(regression.locator('.alert-summary').innerText()).resolves.toBe(`${EVIL_CLIENT} 1.1.0 no longer declares ${A}`);
    await expect(resolved().count()).resolves.toBe(1);
    await expect(resolved().locator('.alert-summary').innerText()).resolves.toMatch(/^Instance cart-1 of cart has not reported for 15 minutes$/);
    // The rule, and its kind only where the name does not say it.
    await expect(skew.locator('.alert-text .sub').first().innerText()).resolves.toBe('skew (advertisement_skew)');
    await expect(resolved().locator('.alert-text .sub').first().innerText()).resolves.toBe('stale_instance');
    // The runbook of the kind, opened apart; a rule's runbook_url that is no http(s) URL is no link.
    const runbook = skew.getByRole('link', { name: 'Runbook' });
    await expect(runbook.getAttribute('href')).resolves.toBe(`${RUNBOOKS_URL}#advertisement_skew`);
    await expect(runbook.getAttribute('rel')).resolves.toBe('noopener noreferrer');
    await expect(regression.getByRole('link', { name: 'Runbook' }).count()).resolves.toBe(0);
    await expect(regression.locator('a[href^="javascript"]').count()).resolves.toBe(0);
    await expect(page.locator('main script, img').count()).resolves.toBe(0);
    await expect(page.locator('p.summary').innerText()).resolves.toMatch(/^3 rules from .*rules\.yaml, evaluated every 3600 s; last evaluation /);
    expect(watched.dialogs).toEqual([]);
    expect(watched.errors).toEqual([]);
    expect(watched.foreign).toEqual([]);
  });

  it('the service filter applies to alerts', async () => {
    await open(`?view=alerts&service=${encodeURIComponent('cart')}`);
    await expect(active().count()).resolves.toBe(0);
    await expect(page.getByText('No alert is pending or firing.').count()).resolves.toBe(1);
    await expect(resolved().count()).resolves.toBe(1);
  });

  it('each alert links to the view that shows its cause: the fleet of the service, the matrix by client version', async () => {
    await open('?view=alerts');
    await active().filter({ hasText: 'advertisement_skew' }).getByRole('link', { name: 'Open fleet' }).click();
    await ready(page);
    const fleet = new URL(page.url()).searchParams;
    expect([fleet.get('view'), fleet.get('service')]).toEqual(['fleet', EVIL_SERVICE]);
    await expect(page.locator('section.service').count()).resolves.toBe(1);
    await expect(page.locator('section.service h3').innerText()).resolves.toContain(EVIL_SERVICE);

    await open('?view=alerts');
    await active().filter({ hasText: 'client_regression' }).getByRole('link', { name: 'Open matrix' }).click();
    await ready(page);
    const matrix = new URL(page.url()).searchParams;
    expect([matrix.get('view'), matrix.get('group'), matrix.get('rows')]).toEqual([null, 'client_version', EVIL_CLIENT]);
    await expect(page.locator(`tbody tr[data-client="${EVIL_CLIENT}@1.1.0"]`).count()).resolves.toBe(1);
    await expect(page.locator('main script, img').count()).resolves.toBe(0);
    expect(watched.dialogs).toEqual([]);
    expect(watched.errors).toEqual([]);
  });
});
