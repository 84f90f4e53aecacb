import { MAX_EXTENSION_ID_LENGTH } from '../../../../../contract/index.js';
import { nameSchema, nullableString, partialFromSchema, rangeProperties, stepSchema } from '../../../schemas/shared.js';

const counts = { type: 'array', items: { type: 'integer' } } as const;
const common = {
  ...rangeProperties,
  step: stepSchema,
  service: nameSchema,
  instance: nameSchema,
  client: nameSchema,
} as const;
const frame = {
  from: { type: 'string' },
  to: { type: 'string' },
  stepMinutes: { type: 'integer' },
  times: { type: 'array', items: { type: 'string' } },
  partialFrom: partialFromSchema,
} as const;
const frameRequired = ['from', 'to', 'stepMinutes', 'times', 'partialFrom'] as const;

export const declarationsSchema = {
  querystring: { type: 'object', additionalProperties: false, properties: common },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: [...frameRequired, 'requests', 'unknown', 'none', 'declared'],
      properties: { ...frame, requests: counts, unknown: counts, none: counts, declared: counts },
    },
  },
} as const;

export const clientsSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      ...common,
      group: { type: 'string', enum: ['client', 'client_version'], default: 'client' },
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: [...frameRequired, 'group', 'clients', 'other'],
      properties: {
        ...frame,
        group: { type: 'string' },
        clients: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['client', 'name', 'version', 'total', 'requests'],
            properties: { client: { type: 'string' }, name: nullableString, version: nullableString, total: { type: 'integer' }, requests: counts },
          },
        },
        other: {
          type: 'object',
          additionalProperties: false,
          required: ['clients', 'total', 'requests'],
          properties: { clients: { type: 'integer' }, total: { type: 'integer' }, requests: counts },
        },
      },
    },
  },
} as const;

export const extensionsSchema = {
  querystring: { type: 'object', additionalProperties: false, properties: common },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: [...frameRequired, 'requests', 'serverUnknown', 'extensions'],
      properties: {
        ...frame,
        requests: counts,
        /** Of `requests`, those answered before any server instance existed: left out of `negotiatedShare`. */
        serverUnknown: counts,
        extensions: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['id', 'clientDeclared', 'serverAdvertised', 'negotiated', 'negotiatedShare'],
            properties: {
              id: { type: 'string' },
              clientDeclared: counts,
              serverAdvertised: counts,
              negotiated: counts,
              negotiatedShare: { type: 'array', items: { type: ['number', 'null'] } },
            },
          },
        },
      },
    },
  },
} as const;

export const requiredSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { ...common, extension: { type: 'string', minLength: 1, maxLength: MAX_EXTENSION_ID_LENGTH } },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: [...frameRequired, 'total', 'errors', 'extensions'],
      properties: {
        ...frame,
        total: { type: 'integer' },
        errors: counts,
        extensions: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['id', 'total', 'counts', 'clients'],
            properties: {
              id: { type: 'string' },
              total: { type: 'integer' },
              counts,
              clients: {
                type: 'array',
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['client', 'name', 'version', 'count'],
                  properties: { client: { type: 'string' }, name: nullableString, version: nullableString, count: { type: 'integer' } },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;
