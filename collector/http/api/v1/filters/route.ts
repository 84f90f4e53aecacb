import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { cellExtensionTotals, clientTotals } from '../../../../analysis/matrix.js';
import { iso, parseRange } from '../../../params.js';
import { readSignal } from '../../../read-signal.js';
import type { ApiContext } from '../context.js';
import { clientsSchema, extensionsSchema } from './schema.js';

/** `GET /clients` and `GET /extensions`: the values seen in a range, for the dashboard's filters. */
export const filterRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (app, { reader, clock }) => {
  app.get('/clients', { schema: clientsSchema, config: { heavyRead: true } }, async (request) => {
    const totals = await reader.cellTotals({ ...parseRange(request.query, clock()), service: request.query.service, signal: readSignal(request) });
    return { from: iso(totals.fromMs), to: iso(totals.toMs), clients: clientTotals(totals.cells) };
  });

  app.get('/extensions', { schema: extensionsSchema, config: { heavyRead: true } }, async (request) => {
    const totals = await reader.cellTotals({ ...parseRange(request.query, clock()), service: request.query.service, signal: readSignal(request) });
    return { from: iso(totals.fromMs), to: iso(totals.toMs), extensions: cellExtensionTotals(totals.cells) };
  });
};
