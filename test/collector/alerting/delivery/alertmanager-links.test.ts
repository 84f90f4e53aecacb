/**
 * What on-call gets: an alert fired by a real collector's rule, routed by a real Alertmanager to a webhook receiver
 * with Alertmanager's default template (its JSON), carries `runbook_url` (a section of docs/runbooks.md for its rule
 * kind) and `dashboard_url`; followed in real headless Chromium, the link opens the view of the cause.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNBOOKS_URL } from '../../../../collector/alerting/runbooks.js';
import { type Browser, launchBrowser, ready, screenshot, watchedPage } from '../../../dashboard/helpers/browser.js';
import { type Alertmanager, startAlertmanager, webhookConfig } from '../../../support/alertmanager.js';
import { ROOT } from '../../../support/processes.js';
import { type TestCollector, startTestCollector, tempDir } from '../../helpers/collector.js';
import { send } from '../helpers.js';
import { type WebhookReceiver, eventually, startReceiver } from './receiver.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const MINUTE = 60_000;

/** One alert of Alertmanager's webhook message (`webhook_configs`, its default template: the JSON). */
interface NotifiedAlert {
  status: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  generatorURL: string;
}

describe('alert links through a real Alertmanager', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let receiver: WebhookReceiver;
  let alertmanager: Alertmanager;
  let collector: TestCollector;
  let browser: Browser;
  let page: Page;
  let notified: NotifiedAlert;

  beforeAll(async () => {
    temp = await tempDir();
    receiver = await startReceiver();
    alertmanager = await startAlertmanager(webhookConfig(receiver.url));
    const rulesPath = join(temp.dir, 'rules.yaml');
    await writeFile(rulesPath, 'rules:\n  - { name: client_regression, kind: client_regression, minRequests: 10 }\n');
    collector = await startTestCollector(temp.dir, {
      rulesPath,
      alertIntervalMs: 3_600_000,
      // Evaluated once: the default resend interval keeps the alert's end minutes ahead.
      delivery: { alertmanagerUrls: [alertmanager.url] },
    });
    // probe-app 1.9.0 declared tasks on all of its 12 requests; 1.10.0 on none of its 12: a regression.
    const now = Date.now();
    for (const [version, declared, atMs] of [
      ['1.9.0', true, now - 20 * MINUTE],
      ['1.10.0', false, now - 10 * MINUTE],
    ] as const) {
      await send(collector.url, {
        service: 'shop',
        atMs,
        requests: [{ client: 'probe-app', version, count: 12 }],
        extensions: [{ id: TASKS, client: 'probe-app', version, count: 12, clientDeclared: declared, serverDeclared: true }],
      });
    }
    await collector.alerting.evaluate();
    notified = await eventually(
      async () =>
        receiver.requests
          .flatMap((request) => (JSON.parse(request.body) as { alerts: NotifiedAlert[] }).alerts)
          .find((alert) => alert.labels['alertname'] === 'client_regression' && alert.status === 'firing'),
      'the firing alert at the webhook receiver',
      600,
    );
    browser = await launchBrowser();
    page = (await watchedPage(browser.context, collector.url)).page;
  });
  afterAll(async () => {
    await browser?.close();
    await collector?.close();
    await alertmanager?.stop();
    await receiver?.close();
    await temp?.cleanup();
  });

  it('the notification carries runbook_url: the section of docs/runbooks.md for the kind, with what it means, likely causes and what to check', async () => {
    expect(notified.annotations['runbook_url']).toBe(`${RUNBOOKS_URL}#client_regression`);
    const runbooks = await readFile(join(ROOT, 'docs', 'runbooks.md'), 'utf8');
    const section = runbooks.split(/^## /m).find((part) => part.startsWith('client_regression\n'));
    expect(section).toBeDefined();
    for (const part of ['**What it means.**', '**Likely causes.**', '**What to check.**']) expect(section).toContain(part);
  });

  it('the notification carries dashboard_url, the same link as generatorURL, and words for people', () => {
    const link = notified.annotations['dashboard_url'] ?? '';
    expect(link.startsWith(`${collector.url}/?`)).toBe(true);
    expect(notified.generatorURL).toBe(link);
    expect(notified.annotations['summary']).toBe(`probe-app 1.10.0 no longer declares ${TASKS}`);
    expect(notified.annotations['description']).toBe(
      `probe-app 1.9.0 declared ${TASKS} on 12 requests; probe-app 1.10.0 declared it on none of its 12 requests (last 7d).`,
    );
  });

  it('followed in Chromium, dashboard_url opens the matrix by client version, filtered to the client, over the range the rule read', async () => {
    await page.goto(notified.annotations['dashboard_url'] ?? '');
    await ready(page);
    await screenshot(page, 'alert-dashboard-link');
    const query = new URL(page.url()).searchParams;
    expect([query.get('view'), query.get('group'), query.get('rows'), query.get('range')]).toEqual(['matrix', 'client_version', 'probe-app', 'custom']);
    const rows = await page.locator('table tbody tr[data-client]').evaluateAll((elements) => elements.map((element) => element.getAttribute('data-client')));
    expect(rows.sort()).toEqual(['probe-app@1.10.0', 'probe-app@1.9.0']);
    const cell = (client: string) => page.locator(`td.cell[data-client="${client}"][data-ext="${TASKS}"]`);
    // The cause, in the cells: 1.9.0 negotiated tasks, 1.10.0 left it to the server alone.
    await expect(cell('probe-app@1.9.0').getAttribute('class')).resolves.toContain('state-negotiated');
    await expect(cell('probe-app@1.10.0').getAttribute('class')).resolves.toContain('state-server');
  });
});
