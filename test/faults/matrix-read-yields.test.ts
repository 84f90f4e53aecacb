import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { READ_CHUNK } from '../../collector/store/sqlite/readers/rollups.js';
import { type ChildCollector, type MatrixJson, spawnCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { pick } from './full.js';
import { fillCells } from './matrix-fill.js';

/** Client names × ids: 250 × the hourly id limit (1024) at full length. */
const CLIENTS = pick(100, 250);
const IDS = 1024;

describe('one wide read does not hold up the collector', () => {
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

  /** A collector on a database filled with the wide cells; returns its URL and the number of cells. */
  async function wideCollector(name: string): Promise<{ url: string; cells: number }> {
    const dbPath = join(temp.dir, name);
    const empty = await startTestCollector(temp.dir, { dbPath });
    await empty.close();
    const cells = fillCells(dbPath, CLIENTS, IDS, Date.now());
    child = await spawnCollector(dbPath);
    return { url: child.url, cells };
  }

  /** GETs `path` and, until its answer is in, one /healthz after another (bounded by the chunks the read takes). */
  async function readWhileProbing<T>(url: string, path: string, cells: number): Promise<{ status: number; body: T; answeredDuring: number }> {
    let done = false;
    const read = fetch(`${url}${path}`).then(async (response) => {
      const body = (await response.json()) as T;
      done = true;
      return { status: response.status, body };
    });
    let answeredDuring = 0;
    for (let attempt = 0; attempt < 100 * (cells / READ_CHUNK) && !done; attempt++) {
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      if (!done) answeredDuring++;
    }
    return { ...(await read), answeredDuring };
  }

  it(`a matrix over ${CLIENTS} clients × ${IDS} ids (one cell each): /healthz keeps answering while it is read, and the read is complete`, async () => {
    const { url, cells } = await wideCollector('wide.db');
    const { status, body, answeredDuring } = await readWhileProbing<MatrixJson & { rowsTotal: number; extensionsTotal: number }>(
      url,
      '/api/v1/matrix?from=-1h&limit=10&extensionLimit=10',
      cells,
    );
    expect(status).toBe(200);
    expect(body.rowsTotal).toBe(CLIENTS);
    expect(body.extensionsTotal).toBe(IDS);
    expect(body.rows.reduce((sum, row) => sum + row.extensions.reduce((cellSum, cell) => cellSum + cell.clientDeclared, 0), 0)).toBeGreaterThan(0);
    // Read in one go, the collector answers none while the read runs (perhaps the one it took first).
    console.log(`matrix over ${cells} cells: /healthz answered ${answeredDuring} times during the read`);
    expect(answeredDuring).toBeGreaterThanOrEqual(5);
  });

  it(`a trend over ${CLIENTS} clients × ${IDS} ids: /healthz keeps answering while it is read, and every id is in it`, async () => {
    const { url, cells } = await wideCollector('wide-trend.db');
    const { status, body, answeredDuring } = await readWhileProbing<{ extensions: { id: string; clientDeclared: number[] }[] }>(
      url,
      '/api/v1/trends/extensions?from=-1h&step=1m',
      cells,
    );
    expect(status).toBe(200);
    expect(body.extensions).toHaveLength(IDS);
    // Every cell holds one count in this minute: each id was declared once per client.
    expect(body.extensions.every((extension) => extension.clientDeclared.reduce((sum, n) => sum + n, 0) === CLIENTS)).toBe(true);
    console.log(`trend over ${cells} cells: /healthz answered ${answeredDuring} times during the read`);
    expect(answeredDuring).toBeGreaterThanOrEqual(5);
  });
});
