import { extensionCountsSchema, isoTime, nameSchema, nullableString, rangeProperties } from '../../../schemas/shared.js';

const querystring = {
  type: 'object',
  additionalProperties: false,
  properties: { ...rangeProperties, service: nameSchema },
} as const;

export const clientsSchema = {
  querystring,
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to', 'clients'],
      properties: {
        from: isoTime,
        to: isoTime,
        clients: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['client', 'name', 'version', 'requests'],
            properties: { client: { type: 'string' }, name: nullableString, version: nullableString, requests: { type: 'integer' } },
          },
        },
      },
    },
  },
} as const;

export const extensionsSchema = {
  querystring,
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to', 'extensions'],
      properties: { from: isoTime, to: isoTime, extensions: extensionCountsSchema },
    },
  },
} as const;
