import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { FromSchema } from 'json-schema-to-ts';
import { extensionTotals, filterMatrix, isInstanceGrouping } from '../../../../analysis/matrix.js';
import { readInstanceMatrix, readMatrix } from '../../../../analysis/read-matrix.js';
import { iso, parseRange } from '../../../params.js';
import { readSignal } from '../../../read-signal.js';
import type { ApiContext } from '../context.js';
import { matrixCsv } from './csv.js';
import { matrixSchema } from './schema.js';

/**
 * `GET /matrix`: per client (name, or name@version), per service or per instance (service + instance id), requests, declaration states and per extension id the
 * requests where the client declared it, the server advertised it, and both (negotiated), the requests answered
 * before any server instance existed (`serverUnknown`, which shares leave out), the `-32021` answers naming it, and
 * what these mean (state and shares, analysis/cell.ts). `format=csv` too: the one CSV writer, which the page's
 * export button downloads. At most `limit` rows and `extensionLimit` ids, the busiest; the rest summed under
 * `_OTHER`. `rows`, `cols` (text contained in the row label / the id) and `client` (exact name) narrow what is sent;
 * by service or instance, `client` narrows the requests counted (which instances negotiate what with that client).
 */
/** What a matrix read asks for, refused up front past the read budget (http/read-budget.ts): rows × extension ids. */
function askedCells(query: unknown): number {
  const { limit, extensionLimit } = query as FromSchema<typeof matrixSchema.querystring>;
  return (limit ?? 0) * (extensionLimit ?? 0);
}

export const matrixRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (app, { reader, clock }) => {
  app.get('/matrix', { schema: matrixSchema, config: { heavyRead: { askedCells } } }, async (request, reply) => {
    const { group, format, service, instance, limit, extensionLimit, rows, cols, client } = request.query;
    const now = clock();
    const range = { ...parseRange(request.query, now), signal: readSignal(request) };
    const limits = { rows: limit, extensions: extensionLimit };
    const read = isInstanceGrouping(group)
      ? await readInstanceMatrix(reader, { ...range, service, instance, clientName: client }, group, limits)
      : await readMatrix(reader, { ...range, service, instance }, group, limits);
    const view = filterMatrix(read.view, { rows, cols, client: isInstanceGrouping(group) ? undefined : client });
    if (format === 'csv') {
      const csv = matrixCsv(view, group);
      // Text, not the JSON the schema describes: sent as it is, past the serializer.
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="extscope-matrix.csv"')
        .send(csv as never);
    }
    // The current bucket is summed whole, but holds nothing from after now: the range ends now.
    return {
      from: iso(read.fromMs),
      to: iso(Math.min(read.toMs, now)),
      resolution: read.resolution,
      group,
      behind: reader.behind(),
      ...view,
      totals: extensionTotals(view),
    };
  });
};
