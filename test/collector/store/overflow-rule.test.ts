/**
 * `recordsAdvertisements` (store/common/overflow-rule.ts): what a sender advertised is recorded only when the
 * instance cap stored the sender as itself. The rule is object identity with what the cap returns, so its
 * meaning rests on the cap answering with the very object it was given when the instance fits: checked here with
 * the SQLite store's cap over an in-memory database (the conformance suite checks the outcome on both stores).
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResourceBatch, ResourceIdentity } from '../../../collector/model/batches.js';
import { findMigrationsDir, loadMigrations } from '../../../collector/store/common/migrations.js';
import { recordsAdvertisements } from '../../../collector/store/common/overflow-rule.js';
import { migrate } from '../../../collector/store/sqlite/migrate.js';
import { ResourceLimit } from '../../../collector/store/sqlite/writer/resource-limit.js';
import { OVERFLOW_VALUE, RESOURCE_ATTRIBUTES } from '../../../contract/index.js';

function resource(service: string, instanceId: string): ResourceIdentity {
  const identity = Object.fromEntries(RESOURCE_ATTRIBUTES.map((attribute) => [attribute.key, null])) as Record<string, string | null>;
  return {
    ...identity,
    service,
    instanceId,
    canonical: `${service}/${instanceId}`,
    key: `${service}/${instanceId}`,
    instanceDerived: false,
  } as ResourceIdentity;
}

/** One resource's part of an export, with no points: what the SQLite cap is given. */
const exported = (sent: ResourceIdentity): ResourceBatch => ({ resource: sent, counters: [], advertised: [], advertisedCounts: [] });

describe('recordsAdvertisements', () => {
  it('records for the resource the sender reported, and not for any other object, however alike', () => {
    const sent = resource('svc', 'i-1');
    expect(recordsAdvertisements(sent, sent)).toBe(true);
    expect(recordsAdvertisements(sent, { ...sent })).toBe(false);
    expect(recordsAdvertisements(sent, { ...sent, instanceId: OVERFLOW_VALUE })).toBe(false);
    expect(recordsAdvertisements(sent, { ...sent, service: OVERFLOW_VALUE })).toBe(false);
  });

  describe('with the SQLite cap deciding where the sender is stored', () => {
    let db: Database.Database;
    beforeEach(() => {
      db = new Database(':memory:');
      migrate(db, loadMigrations(findMigrationsDir('sqlite')));
    });
    afterEach(() => db.close());

    it('an instance that fits is stored as itself: recorded', () => {
      const limit = new ResourceLimit(db, { maxServices: 10, maxInstances: 1 });
      const sent = resource('svc', 'i-1');
      const stored = limit.apply(exported(sent));
      expect(stored).toMatchObject({ service: 'svc', instanceId: 'i-1' });
      expect(recordsAdvertisements(sent, stored)).toBe(true);
    });

    it('an instance past the instance cap is stored as the service’s _OTHER: not recorded, on its first export and its later ones', () => {
      const limit = new ResourceLimit(db, { maxServices: 10, maxInstances: 1 });
      const first = resource('svc', 'i-1');
      expect(recordsAdvertisements(first, limit.apply(exported(first)))).toBe(true);
      const over = resource('svc', 'i-2');
      const stored = limit.apply(exported(over));
      expect(stored).toMatchObject({ service: 'svc', instanceId: OVERFLOW_VALUE });
      expect(recordsAdvertisements(over, stored)).toBe(false);
      // Its next export takes the remembered decision (a new object each time): still not recorded.
      const again = resource('svc', 'i-2');
      expect(limit.apply(exported(again))).toMatchObject({ instanceId: OVERFLOW_VALUE });
      expect(recordsAdvertisements(again, limit.apply(exported(again)))).toBe(false);
    });

    it('a service past the service cap is stored under _OTHER: not recorded', () => {
      const limit = new ResourceLimit(db, { maxServices: 1, maxInstances: 10 });
      const first = resource('a', 'i-1');
      expect(recordsAdvertisements(first, limit.apply(exported(first)))).toBe(true);
      const over = resource('b', 'i-2');
      const stored = limit.apply(exported(over));
      expect(stored).toMatchObject({ service: OVERFLOW_VALUE, instanceId: 'i-2' });
      expect(recordsAdvertisements(over, stored)).toBe(false);
    });
  });
});
