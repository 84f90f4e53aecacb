import { extensionCountsSchema, isoTime, nameSchema, nullableString, rangeProperties } from '../../../schemas/shared.js';

const declaration = {
  type: 'object',
  additionalProperties: false,
  required: ['unknown', 'none', 'declared'],
  properties: { unknown: { type: 'integer' }, none: { type: 'integer' }, declared: { type: 'integer' } },
} as const;


export const matrixSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      ...rangeProperties,
      service: nameSchema,
      instance: nameSchema,
      group: { type: 'string', enum: ['client', 'client_version'], default: 'client' },
      format: { type: 'string', enum: ['json', 'csv'], default: 'json' },
      /** The busiest rows shown; the rest are summed in the row `_OTHER`. */
      limit: { type: 'integer', minimum: 1, maximum: 5000, default: 500 },
      /** The busiest extension ids shown; the rest are summed under the id `_OTHER`. */
      extensionLimit: { type: 'integer', minimum: 1, maximum: 2000, default: 200 },
      /** Only rows whose label contains this text (any case). */
      rows: { type: 'string', maxLength: 512 },
      /** Only ids containing this text (any case). */
      cols: { type: 'string', maxLength: 512 },
      /** Only rows of this client name. */
      client: nameSchema,
    },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to', 'resolution', 'group', 'extensions', 'totals', 'rows'],
      properties: {
        from: isoTime,
        to: isoTime,
        resolution: { type: 'string', enum: ['minute', 'hour'] },
        group: { type: 'string', enum: ['client', 'client_version'] },
        /** True when accepted data may not be included yet (the store cannot write; see README). */
        behind: { type: 'boolean' },
        extensions: { type: 'array', items: { type: 'string' } },
        /** Per id of `extensions`, the totals over the rows sent, with their state and shares (as a cell's). */
        totals: extensionCountsSchema,
        /** Rows and ids before the limits. */
        rowsTotal: { type: 'integer' },
        extensionsTotal: { type: 'integer' },
        rows: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['client', 'name', 'version', 'requests', 'serverUnknown', 'declaration', 'extensions'],
            properties: {
              client: { type: 'string' },
              name: nullableString,
              version: nullableString,
              requests: { type: 'integer' },
              /**
               * Of `requests`, those answered before any server instance existed (no server declaration known):
               * shares are taken over `requests - serverUnknown`.
               */
              serverUnknown: { type: 'integer' },
              declaration,
              extensions: extensionCountsSchema,
            },
          },
        },
      },
    },
  },
} as const;
