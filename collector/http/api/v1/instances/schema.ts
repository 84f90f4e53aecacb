import { isoTime, nameSchema, nullableString } from '../../../schemas/shared.js';

const idWithFingerprint = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'fingerprint'],
  properties: { id: { type: 'string' }, fingerprint: nullableString },
} as const;

export const instancesSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      service: nameSchema,
      /**
       * Also list what ended (sessions and instances whose last export said so, stdio sessions gone silent) within
       * `EXTSCOPE_ENDED_TTL_MINUTES`; by default only what runs (the live view).
       */
      ended: { type: 'boolean', default: false },
      /** A page: at most `limit` instances from `offset` on (in service, instance order). */
      limit: { type: 'integer', minimum: 1, maximum: 2000, default: 500 },
      offset: { type: 'integer', minimum: 0, default: 0 },
    },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['instances', 'total', 'nextOffset'],
      properties: {
        /** Instances listed over all pages. */
        total: { type: 'integer' },
        /** The next page's `offset`; null on the last page. */
        nextOffset: { type: ['integer', 'null'] },
        instances: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: [
              'service',
              'instanceId',
              'build',
              'session',
              'firstSeen',
              'lastSeen',
              'ended',
              'stale',
              'live',
              'advertises',
              'servers',
              'settingsVariants',
              'differs',
              'history',
            ],
            properties: {
              service: nullableString,
              instanceId: nullableString,
              serviceVersion: nullableString,
              host: nullableString,
              serverName: nullableString,
              serverVersion: nullableString,
              /** `stdio`: the process served one client session; `http`; null when the sender did not say. */
              transport: nullableString,
              deploymentEnvironment: nullableString,
              k8sNamespace: nullableString,
              k8sDeployment: nullableString,
              /** The key of its build (service, server name and version, host, deployment attributes), as `/builds` lists them. */
              build: { type: 'string' },
              /** It served one client session (`transport` stdio): a session of its build, not a long-lived instance. */
              session: { type: 'boolean' },
              firstSeen: isoTime,
              lastSeen: isoTime,
              /** When it ended: its last export said so, or (a session) it went silent; null while it runs. */
              ended: nullableString,
              /** A long-lived instance not heard from within the stale window (sessions and ended instances never are). */
              stale: { type: 'boolean' },
              /** Running, heard from and advertising: what drift is judged over. */
              live: { type: 'boolean' },
              advertisedAt: nullableString,
              advertises: {
                type: 'array',
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['id', 'fingerprints'],
                  properties: { id: { type: 'string' }, fingerprints: { type: 'array', items: { type: 'string' } } },
                },
              },
              servers: {
                type: 'array',
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['name', 'version', 'count', 'extensions'],
                  properties: {
                    name: nullableString,
                    version: nullableString,
                    count: { type: ['integer', 'null'] },
                    extensions: { type: 'array', items: idWithFingerprint },
                  },
                },
              },
              settingsVariants: { type: 'integer' },
              differs: { type: 'boolean' },
              /**
               * Against the other live instances of its service: `majority`, `minority` (with what it lacks, adds or
               * sets differently), or one side of a `split` (a tie: no majority); null when all agree or it is not live.
               */
              drift: {
                type: ['object', 'null'],
                additionalProperties: false,
                required: ['role', 'lacks', 'extra', 'settingsDiffer', 'members', 'live'],
                properties: {
                  role: { type: 'string', enum: ['majority', 'minority', 'split'] },
                  lacks: { type: 'array', items: { type: 'string' } },
                  extra: { type: 'array', items: { type: 'string' } },
                  settingsDiffer: { type: 'array', items: { type: 'string' } },
                  members: { type: 'integer' },
                  live: { type: 'integer' },
                },
              },
              history: {
                type: 'array',
                items: {
                  type: 'object',
                  additionalProperties: false,
                  required: ['id', 'fingerprint', 'firstSeen', 'lastSeen', 'current'],
                  properties: {
                    id: { type: 'string' },
                    fingerprint: nullableString,
                    serverName: nullableString,
                    serverVersion: nullableString,
                    firstSeen: isoTime,
                    lastSeen: isoTime,
                    current: { type: 'boolean' },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;
