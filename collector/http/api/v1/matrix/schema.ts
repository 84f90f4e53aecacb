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
    },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to', 'resolution', 'group', 'extensions', 'rows'],
      properties: {
        from: isoTime,
        to: isoTime,
        resolution: { type: 'string', enum: ['minute', 'hour'] },
        group: { type: 'string', enum: ['client', 'client_version'] },
        /** True when accepted data may not be included yet (the store cannot write; see README). */
        behind: { type: 'boolean' },
        extensions: { type: 'array', items: { type: 'string' } },
        rows: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['client', 'name', 'version', 'requests', 'declaration', 'extensions'],
            properties: {
              client: { type: 'string' },
              name: nullableString,
              version: nullableString,
              requests: { type: 'integer' },
              declaration,
              extensions: extensionCountsSchema,
            },
          },
        },
      },
    },
  },
} as const;
