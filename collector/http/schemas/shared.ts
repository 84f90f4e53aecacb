/** JSON schemas shared by the API's routes (`as const`: route types are derived from them). */
import { MAX_ATTRIBUTE_LENGTH, MAX_EXTENSION_ID_LENGTH } from '../../../contract/index.js';

const RELATIVE = '-\\d{1,6}[smhdw]';
const EPOCH_MS = '\\d{1,15}';
const ISO = '\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:?\\d{2})?)?';

/** `now`, `-15m`/`-24h`/`-7d` (before now), Unix milliseconds, or ISO 8601. */
export const timeSchema = { type: 'string', maxLength: 40, pattern: `^(now|${RELATIVE}|${EPOCH_MS}|${ISO})$` } as const;
/** A filter value: service name, instance id, client name… (at most as long as a stored attribute). */
export const nameSchema = { type: 'string', minLength: 1, maxLength: MAX_ATTRIBUTE_LENGTH } as const;
export const extensionIdSchema = { type: 'string', minLength: 1, maxLength: MAX_EXTENSION_ID_LENGTH } as const;
/** `1m`, `5m`, `1h`, `1d`… */
export const stepSchema = { type: 'string', pattern: '^\\d{1,5}[mhd]$' } as const;

export const rangeProperties = { from: timeSchema, to: timeSchema } as const;

/** The JSON schema of nullable strings in responses. */
export const nullableString = { type: ['string', 'null'] } as const;
/** Times in responses: ISO 8601, UTC. */
export const isoTime = { type: 'string' } as const;
/**
 * In a series' answer: the start of its first step that may still receive points (the step under way, and the one
 * before it within an export interval of its end), whose counts are not final; null when every step is complete.
 */
export const partialFromSchema = { type: ['string', 'null'] } as const;

const nullableShare = { type: ['number', 'null'] } as const;

/**
 * One matrix cell (or one id's totals) as the API serves it: the counts, and what they mean, computed once in the
 * collector (analysis/cell.ts): the state, and shares over `known` (the requests whose server's declaration is
 * known; null without any).
 */
export const extensionCountsSchema = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: [
      'id',
      'clientDeclared',
      'serverAdvertised',
      'negotiated',
      'serverUnknown',
      'required',
      'state',
      'known',
      'negotiatedShare',
      'clientShare',
      'serverShare',
    ],
    properties: {
      id: { type: 'string' },
      clientDeclared: { type: 'integer' },
      serverAdvertised: { type: 'integer' },
      negotiated: { type: 'integer' },
      /** Of `clientDeclared`, the requests answered before any server instance existed. */
      serverUnknown: { type: 'integer' },
      /** Requests answered `-32021` naming this id. */
      required: { type: 'integer' },
      state: { type: 'string', enum: ['negotiated', 'partial', 'client', 'server', 'neither'] },
      known: { type: 'integer' },
      negotiatedShare: nullableShare,
      clientShare: nullableShare,
      serverShare: nullableShare,
    },
  },
} as const;
