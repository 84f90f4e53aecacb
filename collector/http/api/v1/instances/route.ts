import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { buildFleet, listed } from '../../../../analysis/fleet.js';
import { iso } from '../../../params.js';
import type { ApiContext } from '../context.js';
import { instancesSchema } from './schema.js';

/**
 * `GET /instances`: each instance with what it advertises now, its history, and drift within its service; paged
 * (`limit`, `offset`), instances not heard from for `instanceTtlMs` left out, and those that ended unless asked for
 * (`ended`, within `endedTtlMs`).
 */
export const instancesRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (
  app,
  { reader, clock, staleAfterMs, instanceTtlMs, endedTtlMs },
) => {
  app.get('/instances', { schema: instancesSchema }, async (request) => {
    const { service, limit, offset, ended } = request.query;
    const now = clock();
    // Drift is judged over every instance of a service (only live ones count); the list and page are cut after.
    const fleet = listed(buildFleet(await reader.instances({ service, seenSinceMs: now - instanceTtlMs }), now, staleAfterMs), now, ended ? endedTtlMs : 0);
    const page = fleet.slice(offset, offset + limit);
    const next = offset + page.length;
    // Literals field by field: spreading these objects measured several times slower for a fleet of hundreds.
    return {
      total: fleet.length,
      nextOffset: next < fleet.length ? next : null,
      instances: page.map((instance) => ({
        service: instance.service,
        instanceId: instance.instanceId,
        serviceVersion: instance.serviceVersion,
        host: instance.host,
        serverName: instance.serverName,
        serverVersion: instance.serverVersion,
        transport: instance.transport,
        deploymentEnvironment: instance.deploymentEnvironment,
        k8sNamespace: instance.k8sNamespace,
        k8sDeployment: instance.k8sDeployment,
        build: instance.buildKey,
        session: instance.session,
        firstSeen: iso(instance.firstSeenMs),
        lastSeen: iso(instance.lastSeenMs),
        ended: instance.endedMs === null ? null : iso(instance.endedMs),
        stale: instance.stale,
        live: instance.live,
        advertisedAt: instance.advertisedMs === null ? null : iso(instance.advertisedMs),
        advertises: instance.advertises,
        servers: instance.servers,
        settingsVariants: instance.settingsVariants,
        differs: instance.differs,
        drift: instance.drift,
        history: instance.history.map((row) => ({
          id: row.id,
          fingerprint: row.fingerprint,
          serverName: row.serverName,
          serverVersion: row.serverVersion,
          firstSeen: iso(row.firstSeenMs),
          lastSeen: iso(row.lastSeenMs),
          current: row.current,
        })),
      })),
    };
  });
};
