import { afterAll, describe, expect, it } from 'vitest';
import { startTestCollector, tempDir } from '../helpers/collector.js';
import { testDatabases } from '../store/postgres-server.js';

const databases = testDatabases('backup');

afterAll(() => databases.dropAll());

describe('POST /admin/backup on a PostgreSQL store', () => {
  it('is answered 501 with the store’s own refusal, which names pg_dump, and the collector goes on', async () => {
    const temp = await tempDir();
    const collector = await startTestCollector(temp.dir, { dbPath: await databases.create() });
    try {
      const response = await fetch(`${collector.url}/admin/backup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(response.status).toBe(501);
      const body = (await response.json()) as { code: string; message: string };
      expect(body.code).toBe('EXTSCOPE_BACKUP_UNSUPPORTED');
      expect(body.message).toMatch(/pg_dump/);
      expect((await fetch(`${collector.url}/healthz`)).status).toBe(200);
    } finally {
      await collector.close();
      await temp.cleanup();
    }
  });
});
