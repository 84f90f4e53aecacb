import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTR_SERVER_NAME, ATTR_SERVER_VERSION, ATTR_SERVICE_VERSION } from '../../contract/index.js';
import { type TestCollector, getJson, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import {
  CUMULATIVE,
  type Json,
  type ResourceSpec,
  type ServerSpec,
  advertisedPoint,
  attribute,
  countPoint,
  extensionPoint,
  metricsRequest,
  msToNs,
  postMetrics,
  processEnded,
  requestPoint,
} from '../collector/helpers/otlp.js';
import { type Browser, type Watched, launchBrowser, ready, screenshot, watchedPage } from './helpers/browser.js';

/**
 * A fleet as stdio MCP servers really run, in Chromium: 200 stdio sessions (one process per client session) of 2
 * builds and 3 long-lived HTTP instances (and one that was shut down), fed to a real collector as OTLP exports
 * shaped as the agent sends them — cumulative counts under one start time per process, the advertisement gauges at
 * every export, `extscope.server.transport` on the resource, `extscope.process.ended` in a process's last export.
 */

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const BUILDS = [
  { version: '1.0.0', sessions: 120, live: 3, killed: 2, advertises: [TASKS] },
  { version: '1.1.0', sessions: 80, live: 2, killed: 0, advertises: [TASKS, SEARCH] },
] as const;
const API_INSTANCES = ['api-1', 'api-2', 'api-3'];

interface Process {
  resource: ResourceSpec;
  server: ServerSpec;
  advertises: readonly string[];
  startNs: bigint;
  client: string;
}

function sender(
  service: string,
  server: ServerSpec,
  host: string,
  transport: 'stdio' | 'http',
  advertises: readonly string[],
  client: string,
  instance: string = randomUUID(),
): Process {
  return {
    resource: {
      service,
      instance,
      host,
      transport,
      extra: [
        attribute(ATTR_SERVICE_VERSION, server.version),
        attribute(ATTR_SERVER_NAME, server.name),
        attribute(ATTR_SERVER_VERSION, server.version),
        attribute('process.pid', 4000),
        attribute('process.runtime.name', 'nodejs'),
      ],
    },
    server,
    advertises,
    startNs: 0n,
    client,
  };
}

/** One export of a process: its requests so far (cumulative), what it advertises, and, the last, that it ended. */
function exportOf(proc: Process, requests: number, atMs: number, ended = false): Json {
  const timeNs = msToNs(atMs);
  const request = { server: proc.server, client: proc.client, version: '1.0.0', count: requests, startNs: proc.startNs, timeNs };
  return metricsRequest({
    resource: proc.resource,
    temporality: CUMULATIVE,
    requests: [requestPoint(request)],
    extensions: [extensionPoint({ ...request, id: TASKS, clientDeclared: true, serverDeclared: true })],
    advertised: proc.advertises.map((id) => advertisedPoint({ id, fingerprint: '44136fa355b3678a', timeNs, server: proc.server })),
    counts: [countPoint(proc.advertises.length, timeNs, proc.server.name, proc.server.version)],
    other: ended ? [processEnded(timeNs)] : [],
  });
}

const T0 = Date.now();
const clock = { now: T0 };
let collector: TestCollector;
let cleanup: () => Promise<void>;
let browser: Browser | undefined;
let watched: Watched;
let page: Page;
/** Requests sent by the sessions, in all and per build (by server version). */
const sent = { total: 0, byVersion: new Map<string, number>() };
const sessions: { proc: Process; build: (typeof BUILDS)[number]; index: number; requests: number }[] = [];
const apis: Process[] = [];
let retired: Process;

async function send(request: Json): Promise<void> {
  const response = await postMetrics(collector.url, request);
  expect(response.status, await response.text()).toBe(200);
}

type InstanceJson = { instanceId: string; session: boolean; ended: string | null; live: boolean; stale: boolean; build: string };
const instances = async (query = ''): Promise<InstanceJson[]> =>
  (await getJson<{ instances: InstanceJson[] }>(`${collector.url}/api/v1/instances?limit=2000${query}`)).body.instances;

beforeAll(async () => {
  const temp = await tempDir();
  cleanup = temp.cleanup;
  collector = await startTestCollector(temp.dir, { clock: () => clock.now });
  for (const build of BUILDS)
    for (let index = 0; index < build.sessions; index++) {
      const proc = sender('notes', { name: 'notes', version: build.version }, 'laptop-1', 'stdio', build.advertises, index % 2 === 0 ? 'desktop' : 'ide');
      proc.startNs = msToNs(T0 - 5_000);
      sessions.push({ proc, build, index, requests: 1 + (index % 4) });
    }
  for (const name of API_INSTANCES)
    apis.push(sender('search-api', { name: 'search-api', version: '2.0.0' }, `web-${name}`, 'http', [TASKS, SEARCH], 'agent', name));
  retired = sender('search-api', { name: 'search-api', version: '2.0.0' }, 'web-api-0', 'http', [TASKS, SEARCH], 'agent', 'api-0');
  for (const proc of [...apis, retired]) proc.startNs = msToNs(T0 - 3_600_000);
  // Every process exports once (a session: its first request), in batches as many senders at once would.
  for (let from = 0; from < sessions.length; from += 25)
    await Promise.all(sessions.slice(from, from + 25).map(({ proc }) => send(exportOf(proc, 1, clock.now))));
  for (const proc of [...apis, retired]) await send(exportOf(proc, 10, clock.now));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await collector?.close();
  await cleanup?.();
});

describe('sessions and builds: a stdio fleet of 200 sessions of 2 builds beside 3 long-lived HTTP instances', () => {
  it('a session that sends its last export leaves the live list with that export; what ended is listed when asked for', async () => {
    expect((await instances()).length).toBe(204);
    clock.now = T0 + 30_000;
    // Sessions end as their clients go, each with a last export holding its final counts; the live and the killed do not.
    for (const session of sessions) {
      const ends = session.index >= session.build.live + session.build.killed;
      if (ends) await send(exportOf(session.proc, session.requests, clock.now, true));
    }
    await send(exportOf(retired, 12, clock.now, true));
    // No time has passed: gone from the live list at the export that said so, not after any silence.
    const live = await instances();
    expect(live.filter((instance) => instance.session)).toHaveLength(3 + 2 + 2);
    expect(live.filter((instance) => !instance.session).map((instance) => instance.instanceId)).toEqual(API_INSTANCES);
    const all = await instances('&ended=true');
    expect(all).toHaveLength(204);
    expect(all.filter((instance) => instance.ended !== null)).toHaveLength(200 - 7 + 1);
  });

  it('a session killed without a last export ends once silent for two export intervals; running ones, exporting every interval, stay', async () => {
    // The running sessions and the instances export every minute (the agent's interval); the killed ones never again.
    for (const at of [60_000, 120_000]) {
      clock.now = T0 + at;
      for (const session of sessions) if (session.index < session.build.live) await send(exportOf(session.proc, session.requests, clock.now));
      for (const proc of apis) await send(exportOf(proc, 10 + at / 60_000, clock.now));
    }
    clock.now = T0 + 150_000;
    const live = await instances();
    expect(live.filter((instance) => instance.session)).toHaveLength(3 + 2);
    expect(live.filter((instance) => !instance.session).map((instance) => [instance.instanceId, instance.live, instance.stale])).toEqual(
      API_INSTANCES.map((id) => [id, true, false]),
    );
    const builds = (
      await getJson<{ builds: { label: string; liveSessions: number; sessions: number; instances: { instanceId: string }[] }[] }>(
        `${collector.url}/api/v1/builds`,
      )
    ).body.builds;
    expect(builds.map((build) => [build.label, build.liveSessions, build.sessions, build.instances.map((instance) => instance.instanceId)])).toEqual([
      ['notes@1.0.0 on laptop-1', 3, 120, []],
      ['notes@1.1.0 on laptop-1', 2, 80, []],
      ['search-api@2.0.0 on web-api-0', 0, 0, []],
      ['search-api@2.0.0 on web-api-1', 0, 0, ['api-1']],
      ['search-api@2.0.0 on web-api-2', 0, 0, ['api-2']],
      ['search-api@2.0.0 on web-api-3', 0, 0, ['api-3']],
    ]);
  });

  it('the matrix loses no count: every request sent is in it, by client, by build and by instance', async () => {
    // What each session counted last (cumulative): a killed one its first request, the others all of theirs.
    const counted = (session: (typeof sessions)[number]): number =>
      session.index >= session.build.live && session.index < session.build.live + session.build.killed ? 1 : session.requests;
    for (const session of sessions) {
      sent.total += counted(session);
      sent.byVersion.set(session.build.version, (sent.byVersion.get(session.build.version) ?? 0) + counted(session));
    }
    const apiTotal = 3 * 12 + 12;
    type Matrix = { rows: { client: string; build?: string; instance?: string; requests: number; extensions: { id: string; negotiated: number }[] }[] };
    const matrix = async (group: string): Promise<Matrix['rows']> =>
      (await getJson<Matrix>(`${collector.url}/api/v1/matrix?from=-1h&group=${group}&limit=500`)).body.rows;
    const total = (rows: Matrix['rows']): number => rows.reduce((sum, row) => sum + row.requests, 0);
    const byClient = await matrix('client');
    expect(total(byClient)).toBe(sent.total + apiTotal);
    expect(byClient.find((row) => row.client === 'agent')?.requests).toBe(apiTotal);
    const byBuild = await matrix('build');
    expect(byBuild.map((row) => [row.client, row.requests])).toEqual([
      ['notes@1.0.0 on laptop-1', sent.byVersion.get('1.0.0')],
      ['notes@1.1.0 on laptop-1', sent.byVersion.get('1.1.0')],
      ['search-api@2.0.0 on web-api-0', 12],
      ['search-api@2.0.0 on web-api-1', 12],
      ['search-api@2.0.0 on web-api-2', 12],
      ['search-api@2.0.0 on web-api-3', 12],
    ]);
    expect(byBuild.every((row) => row.extensions.find((cell) => cell.id === TASKS)?.negotiated === row.requests)).toBe(true);
    const byInstance = await matrix('instance');
    expect(byInstance).toHaveLength(204);
    expect(total(byInstance)).toBe(sent.total + apiTotal);
  });

  it('the Fleet view lists the 2 builds with their live and total sessions and the 3 instances one by one; "show ended" adds the one shut down', async () => {
    browser = await launchBrowser();
    watched = await watchedPage(browser.context, collector.url);
    page = watched.page;
    page.setDefaultTimeout(10_000);
    await page.goto(`${collector.url}/?view=fleet`);
    await ready(page);
    const notes = page.locator('section.service', { has: page.getByRole('heading', { name: /^notes/ }) });
    const api = page.locator('section.service', { has: page.getByRole('heading', { name: /^search-api/ }) });
    await expect(notes.locator('.summary').innerText()).resolves.toMatch(/^2 builds \(5 live of 200 sessions\) · 2 extension ids/);
    await expect(notes.locator('tbody tr').count()).resolves.toBe(2);
    // The build that differs first (it also advertises search against the majority of the live sessions).
    await expect(notes.locator('tbody th > span:first-child').allInnerTexts()).resolves.toEqual(['notes@1.1.0 on laptop-1', 'notes@1.0.0 on laptop-1']);
    await expect(notes.locator('tbody tr', { hasText: 'notes@1.1.0' }).locator('.badge-drift').allInnerTexts()).resolves.toEqual([`also advertises ${SEARCH}`]);
    await expect(notes.locator('tbody tr', { hasText: 'notes@1.0.0' }).innerText()).resolves.toContain('3 live of 120 sessions');
    await expect(notes.locator('tbody tr', { hasText: 'notes@1.1.0' }).innerText()).resolves.toContain('2 live of 80 sessions');
    await expect(api.locator('.summary').innerText()).resolves.toMatch(/^3 instances · 2 extension ids/);
    await expect(api.locator('tbody th .mono').allInnerTexts()).resolves.toEqual(API_INSTANCES);
    // No session's id is a row of its own.
    await expect(page.locator('main').innerText()).resolves.not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/);
    // Every column heading fits its column (long ids wrap at their dots and slashes).
    const overflowing = await page
      .locator('.fleet-table thead th')
      .evaluateAll((cells) => cells.filter((cell) => cell.scrollWidth > cell.clientWidth + 1).map((cell) => cell.textContent));
    await screenshot(page, 'fleet-sessions');
    expect(overflowing).toEqual([]);

    await page.evaluate('delete document.body.dataset.ready');
    await page.locator('#fleet-ended').check();
    await ready(page);
    expect(new URL(page.url()).searchParams.get('ended')).toBe('1');
    await expect(api.locator('tbody th .mono').allInnerTexts()).resolves.toEqual(['api-0', ...API_INSTANCES]);
    await expect(api.locator('tbody tr', { hasText: 'api-0' }).innerText()).resolves.toContain('ended');
    await expect(api.locator('.summary').innerText()).resolves.toMatch(/^4 instances \(1 ended\) · 2 extension ids/);
    await expect(notes.locator('tbody tr').count()).resolves.toBe(2);
    await screenshot(page, 'fleet-sessions-ended');
    expect(watched.errors).toEqual([]);
  });
});
