import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../../../collector/store/sqlite/index.js';
import { deliveryLogConformance } from './delivery-log-conformance.js';

deliveryLogConformance('SQLite', () => {
  const dirs: string[] = [];
  return {
    async open(clock, hourDays) {
      const dir = await mkdtemp(join(tmpdir(), 'extscope-deliveries-'));
      dirs.push(dir);
      return openSqliteStore({
        path: join(dir, 'extscope.db'),
        clock,
        retention: { minuteDays: 2, hourDays, dedupHours: 6 },
        synchronous: 'normal',
        examplesPerCell: 5,
      });
    },
    async cleanup() {
      await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
});
