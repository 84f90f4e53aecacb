import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { instanceSplit } from '../../../../analysis/instance-split.js';
import { badRequest, iso, parseRange } from '../../../params.js';
import { readSignal } from '../../../read-signal.js';
import type { ApiContext } from '../context.js';
import { matrixCellSchema } from './schema.js';

/**
 * `GET /matrix/cell`: one matrix cell split across the server instances that answered its row's requests (a client
 * name, and version, or none; a service; an instance), each with its requests and the cell's counts, state and shares there.
 * The `limit` busiest instances, the rest summed in `other`. Read from the same instance cells as the matrix grouped
 * by instance, so the parts add up to the cell.
 */
export const matrixCellRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (app, { reader, clock }) => {
  app.get('/matrix/cell', { schema: matrixCellSchema, config: { heavyRead: true } }, async (request) => {
    const { extension, client, version, unnamed, unversioned, service, instance, limit } = request.query;
    if (unnamed && (client !== undefined || version !== undefined))
      throw badRequest('unnamed: the requests that named no client have no client or version to narrow them by');
    if (unversioned && (client === undefined || version !== undefined)) throw badRequest('unversioned: needs a client, and no version');
    const now = clock();
    // A client's row, or any narrowing by version, needs the cells' clients; a row by service or instance does not.
    const clients = client !== undefined || version !== undefined || unnamed || unversioned;
    const totals = await reader.instanceCellTotals({
      ...parseRange(request.query, now),
      service,
      instance,
      clientName: client,
      clients,
      signal: readSignal(request),
    });
    const cells = totals.cells.filter(
      (cell) =>
        (!unnamed || cell.clientName === null) && (!unversioned || cell.clientVersion === null) && (version === undefined || cell.clientVersion === version),
    );
    const split = instanceSplit(cells, extension, limit);
    return { from: iso(totals.fromMs), to: iso(Math.min(totals.toMs, now)), resolution: totals.resolution, behind: reader.behind(), extension, ...split };
  });
};
