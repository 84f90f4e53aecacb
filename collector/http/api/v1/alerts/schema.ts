import { RULE_KINDS, SEVERITIES } from '../../../../model/alerts.js';
import { isoTime, nameSchema } from '../../../schemas/shared.js';

const STATES = ['pending', 'firing', 'resolved'] as const;
const stringMap = { type: 'object', additionalProperties: { type: 'string' } } as const;

export const alertsSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      /** `active`: pending or firing. */
      state: { type: 'string', enum: [...STATES, 'active'] },
      rule: nameSchema,
      /** The alert's `service` label. */
      service: nameSchema,
      /** A page: at most `limit` alerts from `offset` on (firing, pending, then resolved; newest first in each). */
      limit: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
      offset: { type: 'integer', minimum: 0, default: 0 },
    },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['evaluation', 'total', 'nextOffset', 'alerts'],
      properties: {
        evaluation: {
          type: 'object',
          additionalProperties: false,
          required: ['rulesFile', 'intervalSeconds', 'rules', 'lastEvaluation'],
          properties: {
            /** null: the built-in rules. */
            rulesFile: { type: ['string', 'null'] },
            intervalSeconds: { type: 'number' },
            rules: { type: 'integer' },
            lastEvaluation: { type: ['string', 'null'] },
          },
        },
        total: { type: 'integer' },
        nextOffset: { type: ['integer', 'null'] },
        alerts: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: [
              'fingerprint',
              'rule',
              'kind',
              'severity',
              'state',
              'labels',
              'annotations',
              'activeSince',
              'firingSince',
              'resolvedAt',
              'dashboardPath',
              'transitions',
            ],
            properties: {
              fingerprint: { type: 'string' },
              rule: { type: 'string' },
              kind: { type: 'string', enum: RULE_KINDS },
              severity: { type: 'string', enum: SEVERITIES },
              state: { type: 'string', enum: STATES },
              labels: stringMap,
              annotations: stringMap,
              activeSince: isoTime,
              firingSince: { type: ['string', 'null'] },
              resolvedAt: { type: ['string', 'null'] },
              /** The dashboard view that shows the cause, relative to the collector's origin. */
              dashboardPath: { type: 'string' },
              transitions: {
                type: 'array',
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['from', 'to', 'at'],
                  properties: { from: { type: 'string', enum: ['inactive', ...STATES] }, to: { type: 'string', enum: STATES }, at: isoTime },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;
