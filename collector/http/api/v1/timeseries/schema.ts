import { extensionIdSchema, isoTime, nameSchema, partialFromSchema, rangeProperties, stepSchema } from '../../../schemas/shared.js';

export const timeseriesSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    required: ['extension'],
    properties: {
      extension: extensionIdSchema,
      ...rangeProperties,
      step: stepSchema,
      service: nameSchema,
      client: nameSchema,
    },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['extension', 'from', 'to', 'stepMinutes', 'partialFrom', 'points'],
      properties: {
        extension: { type: 'string' },
        from: isoTime,
        to: isoTime,
        stepMinutes: { type: 'integer' },
        partialFrom: partialFromSchema,
        points: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['t', 'requests', 'serverUnknown', 'clientDeclared', 'serverAdvertised', 'negotiated', 'negotiatedShare'],
            properties: {
              t: isoTime,
              requests: { type: 'integer' },
              /** Of `requests`, those answered before any server instance existed: left out of `negotiatedShare`. */
              serverUnknown: { type: 'integer' },
              clientDeclared: { type: 'integer' },
              serverAdvertised: { type: 'integer' },
              negotiated: { type: 'integer' },
              negotiatedShare: { type: ['number', 'null'] },
            },
          },
        },
      },
    },
  },
} as const;
