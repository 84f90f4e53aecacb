import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { iso } from '../../../params.js';
import { traceLink } from '../../../trace-link.js';
import type { ApiContext } from '../context.js';
import { examplesSchema } from './schema.js';

/**
 * `GET /examples`: recent example requests (from spans) for a matrix row (`client`, `version`) or cell (plus
 * `extension`), newest first, each with the link to its trace where a trace link template is set. A sample for
 * drill-down; counts always come from the matrix.
 */
export const examplesRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (app, { reader, traceUrl }) => {
  app.get('/examples', { schema: examplesSchema }, async (request) => {
    const { service, client, version, extension, limit } = request.query;
    const examples = await reader.examples({ service, clientName: client, clientVersion: version, extensionId: extension, limit });
    return { examples: examples.map(({ startMs, ...rest }) => ({ ...rest, start: iso(startMs), traceUrl: traceLink(traceUrl, rest.traceId, rest.spanId) })) };
  });
};
