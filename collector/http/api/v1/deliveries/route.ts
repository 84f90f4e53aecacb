import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { DeliveryLogStore } from '../../../../store/store.js';
import { iso } from '../../../params.js';
import { deliveriesSchema } from './schema.js';

export interface DeliveriesRouteOptions {
  deliveries: Pick<DeliveryLogStore, 'deliveries'>;
}

const isoOrNull = (ms: number | undefined): string | null => (ms === undefined ? null : iso(ms));

/**
 * `GET /alerts/deliveries`: the delivery log, most recently updated first: per receiver and alert transition,
 * its state (queued, retrying, delivered, failed, dropped, abandoned), attempts, last status or error and the
 * next retry. Filter by `receiver`, `state`, `fingerprint` (one alert) or `transition`.
 */
export const deliveriesRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: DeliveriesRouteOptions }> = async (app, { deliveries }) => {
  app.get('/alerts/deliveries', { schema: deliveriesSchema }, async (request) => {
    const { receiver, state, fingerprint, transition, limit } = request.query;
    const records = await deliveries.deliveries({ receiver, state, fingerprint, transitionId: transition, limit });
    return {
      deliveries: records.map((record) => ({
        receiver: record.receiver,
        transitionId: record.transitionId,
        fingerprint: record.fingerprint,
        rule: record.rule,
        from: record.from,
        to: record.to,
        state: record.state,
        attempts: record.attempts,
        lastStatus: record.lastStatus ?? null,
        lastError: record.lastError ?? null,
        createdAt: iso(record.createdAtMs),
        updatedAt: iso(record.updatedAtMs),
        nextAttemptAt: isoOrNull(record.nextAttemptAtMs),
        deliveredAt: isoOrNull(record.deliveredAtMs),
      })),
    };
  });
};
