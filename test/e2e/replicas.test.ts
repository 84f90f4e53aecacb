import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ChildCollector, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { alerts as alertsOf, send } from '../collector/alerting/helpers.js';
import { type WebhookReceiver, startReceiver } from '../collector/alerting/delivery/receiver.js';
import { CUMULATIVE, DELTA, MINUTE_NS, encodeMetrics, metricsRequest, msToNs, requestPoint } from '../collector/helpers/otlp.js';
import { testDatabases } from '../collector/store/postgres-server.js';
import { countingClient, matrixRequests } from '../support/counting-clients.js';
import { ROOT, agentEnv, fixture, nodeArgs } from '../support/processes.js';
import { type Deployment, startDeployment } from './replicas-deployment.js';

/**
 * Three collector replicas on one PostgreSQL database behind nginx (round-robin, nothing sticky): whichever
 * replica an export reaches, and whichever one a read reaches, the numbers are the same and exact.
 */

const EXPORT_INTERVAL_MS = 250;
const REPLICAS = 3;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const databases = testDatabases('e2e');
let dir: Awaited<ReturnType<typeof tempDir>>;
let deployment: Deployment | undefined;
let dbUrl: string;
const servers: ChildProcess[] = [];

beforeAll(async () => {
  dir = await tempDir();
  dbUrl = await databases.create();
  deployment = await startDeployment(dir.dir, dbUrl, REPLICAS);
}, 120_000);

afterAll(async () => {
  for (const child of servers) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }
  }
  await deployment?.stop();
  await databases.dropAll();
  await dir?.cleanup();
});

async function mcpServer(endpoint: string): Promise<string> {
  const server = spawn(process.execPath, nodeArgs(fixture('v2-http-sessions.mjs'), true), {
    cwd: ROOT,
    env: agentEnv(endpoint, { OTEL_METRIC_EXPORT_INTERVAL: String(EXPORT_INTERVAL_MS), EXTSCOPE_SPANS: 'false' }),
  });
  servers.push(server);
  const [line] = (await once(server.stdout, 'data')) as [Buffer];
  return `http://127.0.0.1:${(JSON.parse(line.toString('utf8')) as { port: number }).port}`;
}

describe('three collector replicas on PostgreSQL behind nginx', () => {
  it('instrumented MCP servers export through nginx while one replica is killed (-9) and restarted, twice: every replica reads the requests sent', async () => {
    const lb = deployment as Deployment;
    const bases = [await mcpServer(lb.url), await mcpServer(lb.url)];
    const clients = [
      await countingClient('replicas-modern-a', new URL(`${bases[0]}/mcp`), true),
      await countingClient('replicas-legacy-a', new URL(`${bases[0]}/session`), false),
      await countingClient('replicas-modern-b', new URL(`${bases[1]}/mcp`), true),
      await countingClient('replicas-legacy-b', new URL(`${bases[1]}/session`), false),
    ];
    let stop = false;
    const traffic = clients.map(async ({ client }) => {
      for (let i = 0; i < 5000 && !stop; i++) {
        const result = await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
        expect(result.isError).toBeFalsy();
        await sleep(5);
      }
    });
    await expect.poll(async () => Object.keys(await matrixRequests(lb.url)).length, { timeout: 20_000, interval: 100 }).toBe(clients.length);

    for (const victim of [0, 1]) {
      await lb.kill(victim);
      await sleep(1500); // exports reach the other replicas meanwhile
      await lb.restart(victim);
      await sleep(1500);
    }
    stop = true;
    await Promise.all(traffic);
    for (const { client } of clients) await client.close();

    const expected = Object.fromEntries(clients.map(({ name, counted }) => [name, counted.answers]));
    for (const replica of lb.replicas) {
      await expect.poll(() => matrixRequests(replica.url), { timeout: 20_000, interval: 200 }).toEqual(expected);
    }
    await sleep(4 * EXPORT_INTERVAL_MS);
    for (const replica of lb.replicas) expect(await matrixRequests(replica.url)).toEqual(expected);
    // nginx did spread the exports: every replica stored some (answered 200).
    const exports = (await lb.requests()).filter((request) => request.method === 'POST' && request.path === '/v1/metrics' && request.status === 200);
    const storedBy = new Set(exports.map((request) => request.upstreams.at(-1)));
    expect([...storedBy].sort()).toEqual(lb.replicas.map((replica) => `127.0.0.1:${replica.port}`).sort());
  }, 180_000);

  it('a cumulative sender whose consecutive exports land on different replicas is counted exactly; exports replayed to other replicas (cumulative and delta) count once', async () => {
    const lb = deployment as Deployment;
    const t0 = msToNs(Date.now()) - 30n * MINUTE_NS;
    const start = t0 - MINUTE_NS;
    const exportOf = (minute: number, total: number): Buffer =>
      encodeMetrics(
        metricsRequest({
          resource: { service: 'replicas-cumulative', instance: 'sender-1' },
          temporality: CUMULATIVE,
          requests: [requestPoint({ client: 'cumulative-sender', count: total, startNs: start, timeNs: t0 + BigInt(minute) * MINUTE_NS })],
        }),
      );
    const post = async (url: string, body: Buffer): Promise<number> => {
      const response = await fetch(`${url}/v1/metrics`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body });
      await response.arrayBuffer();
      return response.status;
    };
    const statuses: number[] = [];
    let total = 0;
    for (let minute = 1; minute <= 12; minute++) {
      total += minute;
      const body = exportOf(minute, total);
      // Consecutive exports: replica 0, 1, 2, 0, …
      statuses.push(await post((lb.replicas[minute % REPLICAS] as { url: string }).url, body));
      // A retry of it reaches the next replica; every third one is replayed to all replicas at once.
      statuses.push(await post((lb.replicas[(minute + 1) % REPLICAS] as { url: string }).url, body));
      if (minute % 3 === 0) statuses.push(...(await Promise.all(lb.replicas.map((replica) => post(replica.url, body)))));
      // And an older export, late, through nginx.
      if (minute > 2) statuses.push(await post(lb.url, exportOf(minute - 2, total - minute - (minute - 1))));
    }
    // A delta export, replayed to every replica at once and again through nginx: counted once.
    const delta = encodeMetrics(
      metricsRequest({
        resource: { service: 'replicas-delta', instance: 'sender-2' },
        temporality: DELTA,
        requests: [requestPoint({ client: 'delta-sender', count: 7, startNs: t0, timeNs: t0 + MINUTE_NS })],
      }),
    );
    statuses.push(...(await Promise.all([...lb.replicas.map((replica) => post(replica.url, delta)), post(lb.url, delta), post(lb.url, delta)])));
    expect(statuses.every((status) => status === 200)).toBe(true);
    for (const replica of lb.replicas) {
      const rows = await matrixRequests(replica.url);
      expect([rows['cumulative-sender'], rows['delta-sender']]).toEqual([total, 7]);
    }
    expect((await matrixRequests(lb.url))['cumulative-sender']).toBe(total);
  }, 60_000);

  it('a background job is held by exactly one replica; killing the holder passes it to another', async () => {
    const lb = deployment as Deployment;
    const client = new pg.Client({ connectionString: dbUrl });
    await client.connect();
    // The session advisory lock of the retention job (run at start and every minute; a restarted replica tries it at
    // once), as pg_locks shows a 64-bit key. The fold is no such job: every replica folds, one at a time.
    const holders = async (): Promise<number[]> =>
      (
        await client.query<{ pid: number }>(
          `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
             AND ((classid::bigint << 32) | objid::bigint) = hashtextextended('extscope:job:retention', 0)`,
        )
      ).rows.map((row) => row.pid);
    try {
      const seen = new Set<number>();
      const counts: number[] = [];
      for (let victim = 0; victim < REPLICAS; victim++) {
        await expect.poll(async () => (await holders()).length, { timeout: 15_000, interval: 100 }).toBe(1);
        seen.add((await holders())[0] as number);
        await lb.kill(victim);
        for (let sample = 0; sample < 20; sample++) {
          counts.push((await holders()).length);
          await sleep(100);
        }
        await lb.restart(victim);
      }
      await expect.poll(async () => (await holders()).length, { timeout: 15_000, interval: 100 }).toBe(1);
      seen.add((await holders())[0] as number);
      // Never two holders; and the job changed hands when its holder died (every replica was killed once).
      expect(Math.max(...counts)).toBeLessThanOrEqual(1);
      expect(seen.size).toBeGreaterThanOrEqual(2);
    } finally {
      await client.end();
    }
  }, 120_000);
});

describe('alerting with three collector replicas on PostgreSQL', () => {
  const alertDatabases = testDatabases('e2ealerts');
  let receiver: WebhookReceiver | undefined;
  const collectors: (ChildCollector | undefined)[] = [];

  afterAll(async () => {
    for (const collector of collectors) {
      if (collector !== undefined && collector.child.exitCode === null && collector.child.signalCode === null) {
        collector.child.kill('SIGKILL');
        await collector.exited;
      }
    }
    await receiver?.close();
    await alertDatabases.dropAll();
  });

  it('an alert transition is delivered once: one replica evaluates, its kill -9 passes evaluation on, the webhook gets one message per transition id, and every replica answers the same alerts', async () => {
    const url = await alertDatabases.create();
    receiver = await startReceiver();
    const rules = join(dir.dir, 'replica-rules.yaml');
    await writeFile(rules, 'interval: 1s\nrules:\n  - { name: skew, kind: advertisement_skew, for: 2s }\n');
    const env = { EXTSCOPE_RULES: rules, EXTSCOPE_WEBHOOK_URL: receiver.url, EXTSCOPE_WEBHOOK_SECRET: 'replica-webhook-secret-0123456789' };
    for (let index = 0; index < REPLICAS; index++) collectors.push(await spawnCollector(url, ['--grpc-port', '0'], env));
    const live = (): ChildCollector[] => collectors.filter((collector): collector is ChildCollector => collector !== undefined);
    type Message = { id: string; transition: { from: string; to: string } };
    const messages = (): Message[] => (receiver as WebhookReceiver).requests.map((request) => JSON.parse(request.body) as Message);
    const lastEvaluations = async (): Promise<(string | null)[]> =>
      Promise.all(collectors.map(async (collector) => (collector === undefined ? null : (await alertsOf(collector.url)).evaluation.lastEvaluation)));

    // Two instances of one service, one advertising an extension more: skew, through different replicas.
    const atMs = Date.now() - 60_000;
    await send((collectors[0] as ChildCollector).url, { service: 'replicated', instance: 'r-1', atMs, advertised: [{ id: 'com.example/a' }] });
    await send((collectors[1] as ChildCollector).url, {
      service: 'replicated',
      instance: 'r-2',
      atMs,
      advertised: [{ id: 'com.example/a' }, { id: 'com.example/b' }],
    });
    await expect.poll(() => messages().map((message) => message.transition.to), { timeout: 60_000, interval: 200 }).toEqual(['pending', 'firing']);

    // Exactly one replica has evaluated: that is the leader.
    const evaluated = (await lastEvaluations()).flatMap((at, index) => (at === null ? [] : [index]));
    expect(evaluated).toHaveLength(1);
    const leader = evaluated[0] as number;
    const killed = collectors[leader] as ChildCollector;
    killed.child.kill('SIGKILL');
    await killed.exited;
    collectors[leader] = undefined;

    // The second instance is updated too: the replica that takes over resolves the stored firing alert.
    const survivor = live()[0] as ChildCollector;
    await send(survivor.url, {
      service: 'replicated',
      instance: 'r-1',
      atMs: Date.now() - 30_000,
      advertised: [{ id: 'com.example/a' }, { id: 'com.example/b' }],
    });
    await send(survivor.url, {
      service: 'replicated',
      instance: 'r-2',
      atMs: Date.now() - 30_000,
      advertised: [{ id: 'com.example/a' }, { id: 'com.example/b' }],
    });
    await expect.poll(() => messages().map((message) => message.transition.to), { timeout: 60_000, interval: 200 }).toEqual(['pending', 'firing', 'resolved']);

    // Three more cycles of the new leader (whichever survivor evaluates), then nothing else has been sent.
    const resolvedAt = Date.now();
    await expect
      .poll(async () => (await lastEvaluations()).some((at, index) => index !== leader && at !== null && Date.parse(at) > resolvedAt + 3000), {
        timeout: 60_000,
        interval: 200,
      })
      .toBe(true);
    const sent = messages();
    expect(sent.map((message) => `${message.transition.from}>${message.transition.to}`)).toEqual(['inactive>pending', 'pending>firing', 'firing>resolved']);
    expect(new Set(sent.map((message) => message.id)).size).toBe(sent.length);

    // A replica started now, and both survivors, read the same alert and history from the database.
    collectors[leader] = await spawnCollector(url, ['--grpc-port', '0'], env);
    const answers = await Promise.all(
      live().map(async (collector) => {
        const { total, alerts } = await alertsOf(collector.url);
        return { total, alerts };
      }),
    );
    expect(answers[0]?.total).toBe(1);
    expect(answers[0]?.alerts.map((alert) => [alert.state, alert.transitions.map((t) => t.to)])).toEqual([['resolved', ['pending', 'firing', 'resolved']]]);
    for (const answer of answers) expect(answer).toEqual(answers[0]);
  }, 180_000);
});
