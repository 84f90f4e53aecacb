import type { FastifyPluginAsync } from 'fastify';
import { MAX_EXTENSION_ID_LENGTH } from '../../contract/index.js';
import type { QueryContext } from './context.js';
import { iso, nameSchema, nullableString } from './params.js';

interface ExamplesQuerystring {
  service?: string;
  client?: string;
  version?: string;
  extension?: string;
  limit: number;
}

const ids = { type: 'array', items: { type: 'string' } } as const;

const schema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      service: nameSchema,
      client: nameSchema,
      version: nameSchema,
      extension: { type: 'string', minLength: 1, maxLength: MAX_EXTENSION_ID_LENGTH },
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    },
  },
  response: {
    200: {
      type: 'object',
      required: ['examples'],
      properties: {
        examples: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              service: nullableString,
              instanceId: nullableString,
              traceId: { type: 'string' },
              spanId: { type: 'string' },
              name: { type: 'string' },
              method: nullableString,
              outcome: nullableString,
              statusCode: nullableString,
              clientName: nullableString,
              clientVersion: nullableString,
              clientDeclaration: nullableString,
              start: { type: 'string' },
              durationMs: { type: 'number' },
              clientExtensions: ids,
              serverExtensions: ids,
              negotiated: ids,
              required: ids,
            },
          },
        },
      },
    },
  },
} as const;

/**
 * `GET /examples`: recent example requests (from spans) for a matrix row (`client`, `version`) or cell (plus
 * `extension`), newest first. A sample for drill-down; counts always come from the matrix.
 */
export const examplesRoute: FastifyPluginAsync<QueryContext> = async (app, { store }) => {
  app.get<{ Querystring: ExamplesQuerystring }>('/examples', { schema }, async (request) => {
    const { service, client, version, extension, limit } = request.query;
    const examples = await store.examples({ service, clientName: client, clientVersion: version, extensionId: extension, limit });
    return { examples: examples.map(({ startMs, ...rest }) => ({ ...rest, start: iso(startMs) })) };
  });
};
