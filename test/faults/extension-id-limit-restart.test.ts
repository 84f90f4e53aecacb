import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OVERFLOW_VALUE } from '../../contract/index.js';
import { type ChildCollector, matrix, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { MINUTE_NS, extensionPoint, metricsRequest, msToNs, postMetrics } from '../collector/helpers/otlp.js';

const LIMIT = 5;

/** One export of instance i-1: each id once, `count` requests each, all in one minute. */
function exportOf(ids: string[], count: number, timeNs: bigint) {
  return metricsRequest({
    resource: { service: 'svc', instance: 'i-1' },
    extensions: ids.map((id) => extensionPoint({ client: 'c', count, startNs: timeNs - MINUTE_NS, timeNs, id, clientDeclared: true, serverDeclared: false })),
  });
}

const ids = (prefix: string, count: number): string[] => Array.from({ length: count }, (_, index) => `com.example/${prefix}-${index}`);

/** Client-declared counts per extension id, over the matrix. */
async function declaredById(url: string): Promise<Map<string, number>> {
  const byId = new Map<string, number>();
  for (const row of (await matrix(url)).rows) for (const cell of row.extensions) byId.set(cell.id, (byId.get(cell.id) ?? 0) + cell.clientDeclared);
  return byId;
}

describe('the extension-id limit decides a retried export after a restart as it did the first time', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let child: ChildCollector | undefined;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    child?.child.kill('SIGKILL');
    await child?.exited;
    await temp.cleanup();
  });

  it('ids that overflowed into _OTHER before a kill -9 overflow again when the export is retried after the restart: counted once, exactly', async () => {
    const dbPath = join(temp.dir, 'ids.db');
    const env = { EXTSCOPE_MAX_IDS_PER_INSTANCE_HOUR: String(LIMIT) };
    const t = msToNs(Date.now());
    const first = exportOf(ids('a', LIMIT), 2, t);
    // Past the limit: its points count under _OTHER.
    const second = exportOf(ids('b', 3), 7, t);

    child = await spawnCollector(dbPath, [], env);
    expect((await postMetrics(child.url, first)).status).toBe(200);
    expect((await postMetrics(child.url, second)).status).toBe(200);
    child.child.kill('SIGKILL');
    await child.exited;

    // The sender did not see the answers (the collector died): it retries both.
    child = await spawnCollector(dbPath, [], env);
    expect((await postMetrics(child.url, second)).status).toBe(200);
    expect((await postMetrics(child.url, first)).status).toBe(200);
    const byId = await declaredById(child.url);
    expect(byId.get(OVERFLOW_VALUE)).toBe(3 * 7);
    expect([...byId.keys()].filter((id) => id.startsWith('com.example/b-'))).toEqual([]);
    expect([...byId.values()].reduce((sum, count) => sum + count, 0)).toBe(LIMIT * 2 + 3 * 7);

    // A restart keeps the hour's places taken: a new id still overflows, one already admitted still counts as itself.
    child.child.kill('SIGKILL');
    await child.exited;
    child = await spawnCollector(dbPath, [], env);
    expect((await postMetrics(child.url, exportOf(['com.example/c-0', 'com.example/a-0'], 1, t + 1n))).status).toBe(200);
    const after = await declaredById(child.url);
    expect(after.get(OVERFLOW_VALUE)).toBe(3 * 7 + 1);
    expect(after.get('com.example/a-0')).toBe(2 + 1);
    expect(after.has('com.example/c-0')).toBe(false);
  });
});
