import { extensionIdSchema, isoTime, nameSchema, nullableString } from '../../../schemas/shared.js';

const ids = { type: 'array', items: { type: 'string' } } as const;

export const examplesSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      service: nameSchema,
      client: nameSchema,
      version: nameSchema,
      extension: extensionIdSchema,
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['examples'],
      properties: {
        examples: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: [
              'service',
              'instanceId',
              'traceId',
              'traceUrl',
              'spanId',
              'name',
              'method',
              'outcome',
              'statusCode',
              'clientName',
              'clientVersion',
              'clientDeclaration',
              'start',
              'durationMs',
              'clientExtensions',
              'serverExtensions',
              'negotiated',
              'required',
            ],
            properties: {
              service: nullableString,
              instanceId: nullableString,
              traceId: { type: 'string' },
              /** The trace in the tracing backend (EXTSCOPE_TRACE_URL); null without a template or for a malformed id. */
              traceUrl: nullableString,
              spanId: { type: 'string' },
              name: { type: 'string' },
              method: nullableString,
              outcome: nullableString,
              statusCode: nullableString,
              clientName: nullableString,
              clientVersion: nullableString,
              clientDeclaration: nullableString,
              start: isoTime,
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
