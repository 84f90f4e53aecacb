import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { type Change, advertisingChanges, compareMatrices } from '../../../../analysis/changes.js';
import { readMatrix } from '../../../../analysis/read-matrix.js';
import { MS_PER_HOUR, MS_PER_MINUTE } from '../../../../model/time.js';
import { badRequest, iso, parseRange, parseTime } from '../../../params.js';
import { readSignal } from '../../../read-signal.js';
import type { ApiContext } from '../context.js';
import { changesSchema } from './schema.js';

/** Periods over 48 h are compared in whole hours (as the matrix reads them); shorter ones in whole minutes. */
const unitOf = (lengthMs: number): number => (lengthMs > 48 * MS_PER_HOUR ? MS_PER_HOUR : MS_PER_MINUTE);

const served = (change: Change) => ({
  kind: change.kind,
  subject: change.subject,
  id: change.id,
  before: change.before,
  after: change.after,
  requests: change.requests,
  ...(change.previous === undefined ? {} : { previous: change.previous }),
  ...(change.service === undefined ? {} : { service: change.service }),
  ...(change.build === undefined ? {} : { build: change.build }),
  ...(change.atMs === undefined ? {} : { at: iso(change.atMs) }),
});

/**
 * `GET /changes`: two periods compared (analysis/changes.ts). By default the later one ends now and the earlier one
 * is exactly as long and ends where it begins: equal, adjacent, never overlapping, in whole buckets. `beforeFrom`
 * and `beforeTo` give a custom earlier period.
 */
export const changesRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (app, { reader, clock }) => {
  app.get('/changes', { schema: changesSchema }, async (request) => {
    const { service, instance, threshold, minRequests, beforeFrom, beforeTo } = request.query;
    const now = clock();
    const range = parseRange(request.query, now);
    const unit = unitOf(range.toMs - range.fromMs);
    const end = Math.ceil(range.toMs / unit) * unit;
    const length = Math.max(1, Math.round((range.toMs - range.fromMs) / unit)) * unit;
    let earlier = { fromMs: end - 2 * length, toMs: end - length };
    if ((beforeFrom === undefined) !== (beforeTo === undefined)) throw badRequest('beforeFrom: give both beforeFrom and beforeTo, or neither');
    if (beforeFrom !== undefined && beforeTo !== undefined) {
      earlier = {
        fromMs: Math.floor(parseTime('beforeFrom', beforeFrom, now) / unit) * unit,
        toMs: Math.ceil(parseTime('beforeTo', beforeTo, now) / unit) * unit,
      };
      if (earlier.fromMs >= earlier.toMs) throw badRequest('beforeFrom: must be before beforeTo');
      if (earlier.toMs > end - length) throw badRequest('beforeTo: the earlier period must end before the later one begins');
    }
    const later = { fromMs: end - length, toMs: end };
    const [a, b, records, first] = await Promise.all([
      readMatrix(reader, { ...earlier, service, instance, signal: readSignal(request) }, 'client_version'),
      readMatrix(reader, { ...later, service, instance, signal: readSignal(request) }, 'client_version'),
      reader.instances({ service }),
      reader.historyStart({ service }),
    ]);
    const total = (view: typeof a.view): number => view.rows.reduce((sum, row) => sum + row.requests, 0);
    const own = instance === undefined ? records : records.filter((record) => record.instanceId === instance);
    return {
      before: { from: iso(a.fromMs), to: iso(a.toMs), requests: total(a.view) },
      after: { from: iso(b.fromMs), to: iso(Math.min(b.toMs, now)), requests: total(b.view) },
      historyFrom: first === null ? null : iso(first),
      changes: compareMatrices(a.view, b.view, threshold, minRequests).slice(0, 200).map(served),
      instances: advertisingChanges(own, earlier.fromMs, end).slice(0, 200).map(served),
    };
  });
};
