import type { FastifyPluginAsync } from 'fastify';
import type { QueryContext } from './context.js';
import { buildMatrixView, clientLabel } from './matrix-view.js';
import { extensionCountsSchema, iso, nameSchema, nullableString, parseRange, rangeProperties } from './params.js';

interface FilterQuerystring {
  from?: string;
  to?: string;
  service?: string;
}

const querystring = {
  type: 'object',
  additionalProperties: false,
  properties: { ...rangeProperties, service: nameSchema },
} as const;

const clientsSchema = {
  querystring,
  response: {
    200: {
      type: 'object',
      required: ['from', 'to', 'clients'],
      properties: {
        from: { type: 'string' },
        to: { type: 'string' },
        clients: {
          type: 'array',
          items: {
            type: 'object',
            required: ['client', 'name', 'version', 'requests'],
            properties: { client: { type: 'string' }, name: nullableString, version: nullableString, requests: { type: 'integer' } },
          },
        },
      },
    },
  },
} as const;

const extensionsSchema = {
  querystring,
  response: {
    200: {
      type: 'object',
      required: ['from', 'to', 'extensions'],
      properties: {
        from: { type: 'string' },
        to: { type: 'string' },
        extensions: extensionCountsSchema,
      },
    },
  },
} as const;

/** `GET /clients` and `GET /extensions`: the values seen in a range, for the dashboard's filters. */
export const filterRoutes: FastifyPluginAsync<QueryContext> = async (app, { store, clock, openEndMs }) => {
  app.get<{ Querystring: FilterQuerystring }>('/clients', { schema: clientsSchema }, async (request) => {
    const result = await store.matrix({ ...parseRange(request.query, clock(), openEndMs), service: request.query.service });
    const clients = result.clients
      .map((client) => ({
        client: clientLabel(client.name, client.version, 'client_version'),
        name: client.name,
        version: client.version,
        requests: client.requests,
      }))
      .sort((a, b) => (a.client < b.client ? -1 : a.client > b.client ? 1 : 0));
    return { from: iso(result.fromMs), to: iso(result.toMs), clients };
  });

  app.get<{ Querystring: FilterQuerystring }>('/extensions', { schema: extensionsSchema }, async (request) => {
    const result = await store.matrix({ ...parseRange(request.query, clock(), openEndMs), service: request.query.service });
    const view = buildMatrixView(result, 'client');
    const extensions = view.extensions.map((id, index) => {
      const total = { id, clientDeclared: 0, serverAdvertised: 0, negotiated: 0 };
      for (const row of view.rows) {
        const cell = row.extensions[index];
        if (cell === undefined) continue;
        total.clientDeclared += cell.clientDeclared;
        total.serverAdvertised += cell.serverAdvertised;
        total.negotiated += cell.negotiated;
      }
      return total;
    });
    return { from: iso(result.fromMs), to: iso(result.toMs), extensions };
  });
};
