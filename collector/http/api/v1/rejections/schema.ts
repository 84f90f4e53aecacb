import type { RejectedReason } from '../../../../model/rejections.js';
import { isoTime, nullableString } from '../../../schemas/shared.js';

/** Reasons a data point is refused one by one (model/rejections.ts), as the API names them. */
const REASONS = ['no_instance_identity', 'no_start_time', 'too_old', 'count_too_large'] as const satisfies readonly RejectedReason[];

export const rejectionsSchema = {
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['since', 'total', 'rejections'],
      properties: {
        /** When this collector process started counting (each replica counts its own). */
        since: isoTime,
        /** Points refused in all. */
        total: { type: 'integer' },
        /** By reason and service, most points first; services past the tally's bound are summed as `_OTHER`. */
        rejections: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['reason', 'service', 'points', 'explanation'],
            properties: {
              reason: { type: 'string', enum: REASONS },
              /** The sender's service.name; null when it sent none. */
              service: nullableString,
              points: { type: 'integer' },
              /** What the reason means, and what the sender can do about it. */
              explanation: { type: 'string' },
            },
          },
        },
      },
    },
  },
} as const;
