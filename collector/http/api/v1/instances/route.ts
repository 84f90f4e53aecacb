import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { buildFleet } from '../../../../analysis/fleet.js';
import { iso } from '../../../params.js';
import type { ApiContext } from '../context.js';
import { instancesSchema } from './schema.js';

/** `GET /instances`: each instance with what it advertises now, its history, and drift within its service. */
export const instancesRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (app, { reader, clock, staleAfterMs }) => {
  app.get('/instances', { schema: instancesSchema }, async (request) => {
    const fleet = buildFleet(await reader.instances({ service: request.query.service }), clock(), staleAfterMs);
    return {
      instances: fleet.map(({ firstSeenMs, lastSeenMs, advertisedMs, history, ...instance }) => ({
        ...instance,
        firstSeen: iso(firstSeenMs),
        lastSeen: iso(lastSeenMs),
        advertisedAt: advertisedMs === null ? null : iso(advertisedMs),
        history: history.map(({ firstSeenMs: first, lastSeenMs: last, ...row }) => ({ ...row, firstSeen: iso(first), lastSeen: iso(last) })),
      })),
    };
  });
};
