import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { fleetBuilds } from '../../../../analysis/builds.js';
import { buildFleet } from '../../../../analysis/fleet.js';
import type { ApiContext } from '../context.js';
import { buildsSchema } from './schema.js';

/**
 * `GET /builds`: what was deployed where (service × server name@version × host, refined by deployment attributes),
 * each with its live and total sessions and its long-lived instances, over the instances heard from within
 * `instanceTtlMs`: the same fleet `/instances` lists.
 */
export const buildsRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (app, { reader, clock, staleAfterMs, instanceTtlMs }) => {
  app.get('/builds', { schema: buildsSchema }, async (request) => {
    const now = clock();
    const fleet = buildFleet(await reader.instances({ service: request.query.service, seenSinceMs: now - instanceTtlMs }), now, staleAfterMs);
    return {
      builds: fleetBuilds(fleet).map((build) => ({
        build: build.key,
        label: build.label,
        service: build.service,
        serverName: build.serverName,
        serverVersion: build.serverVersion,
        host: build.host,
        deploymentEnvironment: build.deploymentEnvironment,
        k8sNamespace: build.k8sNamespace,
        k8sDeployment: build.k8sDeployment,
        liveSessions: build.liveSessions,
        sessions: build.sessions,
        instances: build.instances,
      })),
    };
  });
};
