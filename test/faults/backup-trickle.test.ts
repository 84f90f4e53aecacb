import { mkdirSync, readdirSync } from 'node:fs';
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ChildCollector, spawnCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { fillCells } from './matrix-fill.js';

/**
 * A backup reader that takes 16 KB every 20 s makes progress, so the idle timeout never drops it: it held the only
 * backup slot (and the copy in the temporary directory) for as long as it liked, every other backup 503. Now a
 * backup's answer has a total deadline (EXTSCOPE_BACKUP_DEADLINE_MS, short here) past which it is dropped.
 */

const JSON_HEADERS = { 'content-type': 'application/json' };
const DEADLINE_MS = 4000;
/** The trickle: a chunk this size per tick (faster than 16 KB / 20 s, so that the test is short; the same case). */
const CHUNK = 16 * 1024;
const TICK_MS = 500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const copies = (tmp: string): number => readdirSync(tmp).filter((name) => name.startsWith('extscope-backup-')).length;

interface Trickle {
  status: number;
  contentLength: number;
  /** Resolves once the answer ends or is cut: the bytes read, and whether they were all of them. */
  ended: Promise<{ read: number; complete: boolean; afterMs: number }>;
  stop(): void;
}

/** A backup whose answer is read {@link CHUNK} bytes every {@link TICK_MS}. */
async function trickleBackup(url: string): Promise<Trickle> {
  const request = httpRequest(`${url}/admin/backup`, { method: 'POST', headers: JSON_HEADERS });
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    request.once('response', resolve);
    request.once('error', reject);
    request.end('{}');
  });
  const started = Date.now();
  response.pause();
  let read = 0;
  const timer = setInterval(() => {
    let taken = 0;
    for (
      let chunk: Buffer | null;
      taken < CHUNK && (chunk = response.read(Math.min(CHUNK - taken, response.readableLength || CHUNK)) as Buffer | null) !== null;
    )
      taken += chunk.length;
    read += taken;
  }, TICK_MS);
  const ended = new Promise<{ read: number; complete: boolean; afterMs: number }>((resolve) => {
    const finish = (complete: boolean): void => {
      clearInterval(timer);
      resolve({ read, complete, afterMs: Date.now() - started });
    };
    response.once('end', () => finish(true));
    response.once('error', () => finish(false));
    response.once('aborted', () => finish(false));
    response.socket.once('close', () => finish(false));
  });
  return {
    status: response.statusCode ?? 0,
    contentLength: Number(response.headers['content-length']),
    ended,
    stop: () => {
      clearInterval(timer);
      request.destroy();
    },
  };
}

describe('a backup read as a trickle', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let child: ChildCollector | undefined;
  let tmp: string;
  beforeEach(async () => {
    temp = await tempDir();
    tmp = join(temp.dir, 'tmp');
    mkdirSync(tmp);
  });
  afterEach(async () => {
    child?.child.kill('SIGKILL');
    await child?.exited;
    child = undefined;
    await temp.cleanup();
  });

  it(`is dropped at its deadline (${DEADLINE_MS} ms here), its copy removed, and the next backup is made`, { timeout: 180_000 }, async () => {
    const dbPath = join(temp.dir, 'extscope.db');
    const empty = await startTestCollector(temp.dir, { dbPath });
    await empty.close();
    // Larger than what loopback sockets buffer (~25 MB): the trickle cannot be done before the deadline.
    fillCells(dbPath, 200, 1000, Date.now());
    child = await spawnCollector(dbPath, [], { TMPDIR: tmp, EXTSCOPE_BACKUP_DEADLINE_MS: String(DEADLINE_MS) });
    const { url } = child;

    const trickle = await trickleBackup(url);
    expect(trickle.status).toBe(200);
    try {
      // While it runs, it holds the one slot; once dropped (the client still has what the kernel buffered to read,
      // so it learns of the cut only later), the next backup is made. Asked once a second.
      const started = Date.now();
      const statuses: number[] = [];
      let next: Response | undefined;
      while (Date.now() - started < DEADLINE_MS + 20_000) {
        const response = await fetch(`${url}/admin/backup`, { method: 'POST', headers: JSON_HEADERS, body: '{}' });
        statuses.push(response.status);
        if (response.status === 200) {
          next = response;
          break;
        }
        await response.arrayBuffer();
        await sleep(1000);
      }
      const madeAfterMs = Date.now() - started;
      console.log(
        `[faults] trickling backup (${CHUNK} bytes / ${TICK_MS} ms) of ${trickle.contentLength} bytes: next backup ${next === undefined ? 'never made' : `made after ${madeAfterMs} ms`} (statuses ${statuses.join(' ')})`,
      );
      expect(statuses[0]).toBe(503);
      expect(next).toBeDefined();
      expect(madeAfterMs).toBeGreaterThanOrEqual(DEADLINE_MS - 1000);
      expect((await next?.arrayBuffer())?.byteLength).toBe(Number(next?.headers.get('content-length')));
      expect(child.output.join('')).toMatch(/database backup dropped: its client took too long/);
    } finally {
      trickle.stop();
    }
    const outcome = await trickle.ended;
    expect(outcome.complete).toBe(false);
    expect(outcome.read).toBeLessThan(trickle.contentLength);
    await expect.poll(() => copies(tmp), { timeout: 10_000 }).toBe(0);
  });
});
