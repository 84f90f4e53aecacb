import { extensionCountsSchema, extensionIdSchema, isoTime, nameSchema, nullableString, rangeProperties } from '../../../schemas/shared.js';

/** One cell as a matrix serves it (collector/http/schemas/shared.ts), here per instance. */
const cell = extensionCountsSchema.items;

export const matrixCellSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    required: ['extension'],
    properties: {
      ...rangeProperties,
      extension: extensionIdSchema,
      /** The cell's row: a client name (and version), a service, an instance; each absent = any. */
      client: nameSchema,
      version: nameSchema,
      /** Only requests that named no client (the matrix row `(unknown client)`). */
      unnamed: { type: 'boolean', default: false },
      /** Only `client`'s requests that named no version (the row `name@(unknown version)`). */
      unversioned: { type: 'boolean', default: false },
      service: nameSchema,
      instance: nameSchema,
      /** The busiest instances listed; the rest summed in `other`. */
      limit: { type: 'integer', minimum: 1, maximum: 500, default: 20 },
    },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to', 'resolution', 'extension', 'instances', 'other', 'instancesTotal'],
      properties: {
        from: isoTime,
        to: isoTime,
        resolution: { type: 'string', enum: ['minute', 'hour'] },
        behind: { type: 'boolean' },
        extension: { type: 'string' },
        /** Instances that answered the row's requests in the range. */
        instancesTotal: { type: 'integer' },
        instances: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['service', 'instance', 'label', 'requests', 'serverUnknown', 'cell'],
            properties: {
              service: nullableString,
              instance: nullableString,
              label: { type: 'string' },
              requests: { type: 'integer' },
              serverUnknown: { type: 'integer' },
              cell,
            },
          },
        },
        /** The instances past `limit`, summed (`instances`: how many); null when all are listed. */
        other: {
          type: ['object', 'null'],
          additionalProperties: false,
          required: ['instances', 'requests', 'serverUnknown', 'cell'],
          properties: {
            instances: { type: 'integer' },
            requests: { type: 'integer' },
            serverUnknown: { type: 'integer' },
            cell,
          },
        },
      },
    },
  },
} as const;
