import { isoTime, nameSchema, nullableString } from '../../../schemas/shared.js';

const DELIVERY_STATES = ['queued', 'retrying', 'delivered', 'failed', 'dropped', 'abandoned'] as const;

const nullableTime = { type: ['string', 'null'] } as const;

export const deliveriesSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      receiver: nameSchema,
      state: { type: 'string', enum: DELIVERY_STATES },
      fingerprint: nameSchema,
      transition: nameSchema,
      limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['deliveries'],
      properties: {
        deliveries: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: [
              'receiver',
              'transitionId',
              'fingerprint',
              'rule',
              'from',
              'to',
              'state',
              'attempts',
              'lastStatus',
              'lastError',
              'createdAt',
              'updatedAt',
              'nextAttemptAt',
              'deliveredAt',
            ],
            properties: {
              receiver: { type: 'string' },
              transitionId: { type: 'string' },
              fingerprint: { type: 'string' },
              rule: { type: 'string' },
              from: { type: 'string' },
              to: { type: 'string' },
              state: { type: 'string', enum: DELIVERY_STATES },
              attempts: { type: 'integer' },
              lastStatus: { type: ['integer', 'null'] },
              lastError: nullableString,
              createdAt: isoTime,
              updatedAt: isoTime,
              nextAttemptAt: nullableTime,
              deliveredAt: nullableTime,
            },
          },
        },
      },
    },
  },
} as const;
