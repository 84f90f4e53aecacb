import { extensionCountsSchema, isoTime, nameSchema, nullableString, rangeProperties } from '../../../schemas/shared.js';

const declaration = {
  type: 'object',
  additionalProperties: false,
  required: ['unknown', 'none', 'declared'],
  properties: { unknown: { type: 'integer' }, none: { type: 'integer' }, declared: { type: 'integer' } },
} as const;

/** The groupings, in the order the page offers them. */
const MATRIX_GROUPS = ['client', 'client_version', 'service', 'build', 'instance'] as const;

export const matrixSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      ...rangeProperties,
      service: nameSchema,
      instance: nameSchema,
      /** Rows per client name, name@version, service, build (model/build.ts: a row per deployed server, its sessions and instances summed), or service + instance id. */
      group: { type: 'string', enum: MATRIX_GROUPS, default: 'client' },
      format: { type: 'string', enum: ['json', 'csv'], default: 'json' },
      /** The busiest rows shown; the rest are summed in the row `_OTHER`. */
      limit: { type: 'integer', minimum: 1, maximum: 5000, default: 500 },
      /** The busiest extension ids shown; the rest are summed under the id `_OTHER`. */
      extensionLimit: { type: 'integer', minimum: 1, maximum: 2000, default: 200 },
      /** Only rows whose label contains this text (any case). */
      rows: { type: 'string', maxLength: 512 },
      /** Only ids containing this text (any case). */
      cols: { type: 'string', maxLength: 512 },
      /** Only rows of this client name (grouped by service, build or instance: only this client's requests). */
      client: nameSchema,
    },
  },
  response: {
    200: {
      type: 'object',
      additionalProperties: false,
      required: ['from', 'to', 'resolution', 'group', 'extensions', 'totals', 'rows'],
      properties: {
        from: isoTime,
        to: isoTime,
        resolution: { type: 'string', enum: ['minute', 'hour'] },
        group: { type: 'string', enum: MATRIX_GROUPS },
        /** True when accepted data may not be included yet (the store cannot write; see README). */
        behind: { type: 'boolean' },
        extensions: { type: 'array', items: { type: 'string' } },
        /** Per id of `extensions`, the totals over the rows sent, with their state and shares (as a cell's). */
        totals: extensionCountsSchema,
        /** Rows and ids before the limits. */
        rowsTotal: { type: 'integer' },
        extensionsTotal: { type: 'integer' },
        rows: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['client', 'name', 'version', 'requests', 'serverUnknown', 'declaration', 'extensions'],
            properties: {
              client: { type: 'string' },
              name: nullableString,
              version: nullableString,
              /** Grouped by service, build or instance: the row's service, its build's key (by build, as `/builds` gives it), and its instance id (by instance). */
              service: nullableString,
              build: nullableString,
              instance: nullableString,
              requests: { type: 'integer' },
              /**
               * Of `requests`, those answered before any server instance existed (no server declaration known):
               * shares are taken over `requests - serverUnknown`.
               */
              serverUnknown: { type: 'integer' },
              declaration,
              /** Only on the row `_OTHER` past the row limit: how many rows it sums (a client may itself be named `_OTHER`). */
              summedRows: { type: 'integer' },
              extensions: extensionCountsSchema,
            },
          },
        },
      },
    },
  },
} as const;
