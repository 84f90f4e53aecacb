import { nameSchema, nullableString } from '../../../schemas/shared.js';

export const buildsSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { service: nameSchema },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['builds'],
      properties: {
        builds: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: [
              'build',
              'label',
              'service',
              'serverName',
              'serverVersion',
              'host',
              'deploymentEnvironment',
              'k8sNamespace',
              'k8sDeployment',
              'liveSessions',
              'sessions',
              'instances',
            ],
            properties: {
              /** Its key, as each instance's `build` in `/instances` and the matrix rows `group=build` give it. */
              build: { type: 'string' },
              /** `name@version on host (deployment)`. */
              label: { type: 'string' },
              service: nullableString,
              serverName: nullableString,
              serverVersion: nullableString,
              host: nullableString,
              deploymentEnvironment: nullableString,
              k8sNamespace: nullableString,
              k8sDeployment: nullableString,
              /** Sessions (stdio: one client session per process) running now. */
              liveSessions: { type: 'integer' },
              /** Sessions heard from within `EXTSCOPE_INSTANCE_TTL_HOURS`, ended ones included. */
              sessions: { type: 'integer' },
              /** Its long-lived instances that have not ended. */
              instances: {
                type: 'array',
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['instanceId', 'live', 'stale'],
                  properties: { instanceId: nullableString, live: { type: 'boolean' }, stale: { type: 'boolean' } },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;
