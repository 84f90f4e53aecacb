import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ChildCollector, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { encodeMetrics, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';
import { wideExport } from './big-export.js';
import { freePort } from '../support/counting-clients.js';
import { startNginx } from '../support/nginx.js';

/**
 * Behind deploy/nginx.conf, a collector's 503 + Retry-After (too many exports at once) must reach the sender as
 * such: OTLP senders wait for Retry-After before retrying. nginx passed the export on to the next replica (right),
 * but with more tries than replicas it then had none left to try and answered its own 502, without Retry-After.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function inFlight(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^extscope_collector_exports_in_flight (\d+)$/m.exec(text)?.[1] ?? 0);
}

describe("deploy/nginx.conf passes a replica's 503 + Retry-After through", () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  const collectors: ChildCollector[] = [];
  let stopNginx: (() => Promise<void>) | undefined;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await stopNginx?.();
    for (const collector of collectors.splice(0)) {
      collector.child.kill('SIGKILL');
      await collector.exited;
    }
    await temp.cleanup();
  });

  it(
    "every replica at its in-flight limit: each export through nginx is answered 503 with the replica's Retry-After after one try per replica; every replica down: 503 with Retry-After",
    { timeout: 60_000 },
    async () => {
      // One export at a time.
      const env = { EXTSCOPE_MAX_IN_FLIGHT: '1' };
      for (let index = 0; index < 2; index++) collectors.push(await spawnCollector(join(temp.dir, `c${index}.db`), [], env));
      const nginx = await startNginx(
        join(temp.dir, 'nginx'),
        await freePort(),
        collectors.map(({ url }) => new URL(url).host),
      );
      stopNginx = nginx.stop;
      // A large export (20,000 points, about 7 MB) sent to each replica directly takes its only slot once it has
      // arrived, and holds it while it is decoded and stored (over a second each here; a body still arriving holds none).
      const large = collectors.map(({ url }, index) =>
        postMetrics(url, undefined, { body: wideExport(20_000, { instance: `wide-${index}`, clients: 1 }).body }),
      );
      for (const { url } of collectors) {
        for (let attempt = 0; attempt < 1200 && (await inFlight(url)) < 1; attempt++) await sleep(25);
        expect(await inFlight(url)).toBe(1);
      }
      const now = msToNs(Date.now());
      const body = encodeMetrics(
        metricsRequest({
          resource: { instance: 'behind-nginx' },
          requests: [requestPoint({ client: 'alpha', count: 1, startNs: now - 60_000_000_000n, timeNs: now })],
        }),
      );
      for (let round = 0; round < 3; round++) {
        const answer = await fetch(`${nginx.url}/v1/metrics`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body });
        await answer.arrayBuffer();
        expect({ round, status: answer.status }).toEqual({ round, status: 503 });
        // The replica's own (a collector at its in-flight limit asks for 1 s), not nginx's fallback (5 s).
        expect(answer.headers.get('retry-after')).toBe('1');
      }
      for (const answer of await Promise.all(large)) expect(answer.status).toBe(200);
      // The replicas answered it (one try each per export), not nginx.
      const tried = (await readFile(join(temp.dir, 'nginx', 'access.log'), 'utf8'))
        .trim()
        .split('\n')
        .filter((line) => line.startsWith('POST /v1/metrics '));
      expect(tried.map((line) => line.split(' ').slice(2).join(' ').split(', ').length)).toEqual([2, 2, 2]);

      // No replica reachable at all: nginx's own answer is 503 + Retry-After too, not 502.
      for (const collector of collectors.splice(0)) {
        collector.child.kill('SIGKILL');
        await collector.exited;
      }
      const down = await fetch(`${nginx.url}/v1/metrics`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body });
      await down.arrayBuffer();
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('5');
    },
  );
});
