import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { buildMatrix } from '../../../../analysis/matrix.js';
import { iso, parseRange } from '../../../params.js';
import type { ApiContext } from '../context.js';
import { matrixCsv } from './csv.js';
import { matrixSchema } from './schema.js';

/**
 * `GET /matrix`: per client (name, or name@version), requests, declaration states and per extension id the
 * requests where the client declared it, the server advertised it, and both (negotiated), and the requests answered
 * before any server instance existed (`serverUnknown`, which shares leave out). `format=csv` too.
 * At most `limit` rows and `extensionLimit` ids, the busiest; the rest summed under `_OTHER`.
 */
export const matrixRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (app, { reader, clock, openEndMs }) => {
  app.get('/matrix', { schema: matrixSchema }, async (request, reply) => {
    const { group, format, service, instance, limit, extensionLimit } = request.query;
    const totals = await reader.cellTotals({ ...parseRange(request.query, clock(), openEndMs), service, instance });
    const view = buildMatrix(totals.cells, group, { rows: limit, extensions: extensionLimit }, totals.serverUnknown);
    if (format === 'csv') {
      const csv = matrixCsv(view);
      // Text, not the JSON the schema describes: sent as it is, past the serializer.
      return reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="extscope-matrix.csv"').send(csv as never);
    }
    return { from: iso(totals.fromMs), to: iso(totals.toMs), resolution: totals.resolution, group, behind: reader.behind(), ...view };
  });
};
