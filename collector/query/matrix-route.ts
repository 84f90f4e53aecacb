import type { FastifyPluginAsync } from 'fastify';
import type { QueryContext } from './context.js';
import { matrixCsv } from './matrix-csv.js';
import { type Grouping, buildMatrixView } from './matrix-view.js';
import { extensionCountsSchema, iso, nameSchema, nullableString, parseRange, rangeProperties } from './params.js';

interface MatrixQuerystring {
  from?: string;
  to?: string;
  service?: string;
  instance?: string;
  group: Grouping;
  format: 'json' | 'csv';
}

const counts = {
  type: 'object',
  required: ['unknown', 'none', 'declared'],
  properties: { unknown: { type: 'integer' }, none: { type: 'integer' }, declared: { type: 'integer' } },
} as const;

const schema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      ...rangeProperties,
      service: nameSchema,
      instance: nameSchema,
      group: { type: 'string', enum: ['client', 'client_version'], default: 'client' },
      format: { type: 'string', enum: ['json', 'csv'], default: 'json' },
    },
  },
  response: {
    200: {
      type: 'object',
      required: ['from', 'to', 'resolution', 'group', 'extensions', 'rows'],
      properties: {
        from: { type: 'string' },
        to: { type: 'string' },
        resolution: { type: 'string' },
        group: { type: 'string' },
        extensions: { type: 'array', items: { type: 'string' } },
        rows: {
          type: 'array',
          items: {
            type: 'object',
            required: ['client', 'name', 'version', 'requests', 'declaration', 'extensions'],
            properties: {
              client: { type: 'string' },
              name: nullableString,
              version: nullableString,
              requests: { type: 'integer' },
              declaration: counts,
              extensions: extensionCountsSchema,
            },
          },
        },
      },
    },
  },
} as const;

/**
 * `GET /matrix`: per client (name, or name@version), requests, declaration states and per extension id the
 * requests where the client declared it, the server advertised it, and both (negotiated). `format=csv` too.
 */
export const matrixRoute: FastifyPluginAsync<QueryContext> = async (app, { store, clock, openEndMs }) => {
  app.get<{ Querystring: MatrixQuerystring }>('/matrix', { schema }, async (request, reply) => {
    const { group, format, service, instance } = request.query;
    const range = parseRange(request.query, clock(), openEndMs);
    const result = await store.matrix({ ...range, service, instance });
    const view = buildMatrixView(result, group);
    if (format === 'csv') {
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="extscope-matrix.csv"')
        .send(matrixCsv(view));
    }
    return { from: iso(result.fromMs), to: iso(result.toMs), resolution: result.resolution, group, ...view };
  });
};
