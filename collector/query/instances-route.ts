import type { FastifyPluginAsync } from 'fastify';
import type { QueryContext } from './context.js';
import { buildInstancesView } from './instance-view.js';
import { nameSchema, nullableString } from './params.js';

const idWithFingerprint = {
  type: 'object',
  required: ['id', 'fingerprint'],
  properties: { id: { type: 'string' }, fingerprint: nullableString },
} as const;

const schema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { service: nameSchema },
  },
  response: {
    200: {
      type: 'object',
      required: ['instances'],
      properties: {
        instances: {
          type: 'array',
          items: {
            type: 'object',
            required: ['service', 'instanceId', 'firstSeen', 'lastSeen', 'stale', 'advertises', 'servers', 'settingsVariants', 'differs', 'history'],
            properties: {
              service: nullableString,
              instanceId: nullableString,
              serviceVersion: nullableString,
              host: nullableString,
              serverName: nullableString,
              serverVersion: nullableString,
              firstSeen: { type: 'string' },
              lastSeen: { type: 'string' },
              stale: { type: 'boolean' },
              advertisedAt: nullableString,
              advertises: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['id', 'fingerprints'],
                  properties: { id: { type: 'string' }, fingerprints: { type: 'array', items: { type: 'string' } } },
                },
              },
              servers: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['name', 'version', 'count', 'extensions'],
                  properties: {
                    name: nullableString,
                    version: nullableString,
                    count: { type: ['integer', 'null'] },
                    extensions: { type: 'array', items: idWithFingerprint },
                  },
                },
              },
              settingsVariants: { type: 'integer' },
              differs: { type: 'boolean' },
              history: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['id', 'fingerprint', 'firstSeen', 'lastSeen', 'current'],
                  properties: {
                    id: { type: 'string' },
                    fingerprint: nullableString,
                    serverName: nullableString,
                    serverVersion: nullableString,
                    firstSeen: { type: 'string' },
                    lastSeen: { type: 'string' },
                    current: { type: 'boolean' },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;

/** `GET /instances`: each instance with what it advertises now, its history, and drift within its service. */
export const instancesRoute: FastifyPluginAsync<QueryContext> = async (app, { store, clock, staleAfterMs }) => {
  app.get<{ Querystring: { service?: string } }>('/instances', { schema }, async (request) => {
    const records = await store.instances({ service: request.query.service });
    return { instances: buildInstancesView(records, clock(), staleAfterMs) };
  });
};
