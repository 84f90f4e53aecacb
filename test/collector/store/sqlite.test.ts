import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../../collector/store/sqlite/index.js';
import { type StoreBackend, storeConformance } from './conformance.js';

storeConformance('SQLite', (): StoreBackend => {
  const dirs: string[] = [];
  return {
    async place() {
      const dir = await mkdtemp(join(tmpdir(), 'extscope-store-'));
      dirs.push(dir);
      return join(dir, 'store.db');
    },
    async open(path, options) {
      return openSqliteStore({ path, synchronous: 'normal', ...options });
    },
    async cleanup() {
      await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
    },
    async closedGeneration(path) {
      const db = new Database(path, { readonly: true });
      try {
        return Number(db.prepare("SELECT value FROM meta WHERE key = 'closed_generation'").pluck().get() ?? 0);
      } finally {
        db.close();
      }
    },
  };
});
