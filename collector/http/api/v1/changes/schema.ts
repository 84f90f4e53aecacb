import { DEFAULT_MIN_VERSION_REQUESTS } from '../../../../analysis/changes.js';
import { isoTime, nameSchema, nullableString, rangeProperties, timeSchema } from '../../../schemas/shared.js';

const period = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to', 'requests'],
  properties: { from: isoTime, to: isoTime, requests: { type: 'integer' } },
} as const;
const share = { type: ['number', 'null'] } as const;

const change = {
  type: 'object',
  additionalProperties: false,
  required: ['kind', 'subject', 'id', 'before', 'after', 'requests'],
  properties: {
    kind: { type: 'string', enum: ['stopped_declaring', 'started_declaring', 'share_moved', 'stopped_advertising', 'started_advertising'] },
    subject: { type: 'string' },
    id: { type: 'string' },
    before: share,
    after: share,
    requests: { type: 'integer' },
    previous: { type: 'string' },
    service: nullableString,
    /** Advertising changes: the instance's build, `name@version on host` (and its deployment attributes). */
    build: { type: 'string' },
    at: isoTime,
  },
} as const;

export const changesSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      /** The later period (default: the last 24 h, ending now); the earlier one is as long, just before it. */
      ...rangeProperties,
      /** A custom earlier period instead (both or neither). */
      beforeFrom: timeSchema,
      beforeTo: timeSchema,
      service: nameSchema,
      instance: nameSchema,
      /** A share moved when it changed by more than this many points. */
      threshold: { type: 'number', minimum: 0, maximum: 100, default: 5 },
      /** Evidence a version change needs on each side: requests declaring the id on one side, requests at all on the other. */
      minRequests: { type: 'integer', minimum: 0, maximum: 1_000_000_000, default: DEFAULT_MIN_VERSION_REQUESTS },
    },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['before', 'after', 'historyFrom', 'changes', 'instances'],
      properties: {
        before: period,
        after: period,
        /** The oldest data the collector holds (the first time an instance was heard from); null on a new install. */
        historyFrom: { type: ['string', 'null'] },
        /** Client changes, ranked by the requests they affect. */
        changes: { type: 'array', items: change },
        /** Instances that started or stopped advertising an id in either period, newest first. */
        instances: { type: 'array', items: change },
      },
    },
  },
} as const;
