import type { FastifyPluginAsync } from 'fastify';
import type { QueryContext } from './context.js';
import { examplesRoute } from './examples-route.js';
import { filterRoutes } from './filter-routes.js';
import { instancesRoute } from './instances-route.js';
import { matrixRoute } from './matrix-route.js';
import { timeseriesRoute } from './timeseries-route.js';
import { trendsRoute } from './trends-route.js';

/** The read API (registered under `/api/v1`, behind the read token). */
export const queryApi: FastifyPluginAsync<QueryContext> = async (app, { store, clock, staleAfterMs, openEndMs }) => {
  // A fresh object: the registration options also carry this plugin's own prefix.
  const context: QueryContext = { store, clock, staleAfterMs, openEndMs };
  await app.register(matrixRoute, context);
  await app.register(instancesRoute, context);
  await app.register(timeseriesRoute, context);
  await app.register(filterRoutes, context);
  await app.register(examplesRoute, context);
  await app.register(trendsRoute, context);
};
