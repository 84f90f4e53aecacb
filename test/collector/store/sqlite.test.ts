import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  };
});
