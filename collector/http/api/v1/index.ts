import type { FastifyPluginAsync } from 'fastify';
import type { ApiContext } from './context.js';
import { examplesRoutes } from './examples/route.js';
import { filterRoutes } from './filters/route.js';
import { instancesRoutes } from './instances/route.js';
import { matrixRoutes } from './matrix/route.js';
import { timeseriesRoutes } from './timeseries/route.js';
import { trendsRoutes } from './trends/route.js';

export type { ApiContext } from './context.js';

/** The read API (registered under `/api/v1`, behind the read token): each resource a plugin of its own. */
export const apiV1: FastifyPluginAsync<ApiContext> = async (app, { reader, clock, staleAfterMs, openEndMs }) => {
  // A fresh object: the registration options also carry this plugin's own prefix.
  const context: ApiContext = { reader, clock, staleAfterMs, openEndMs };
  await app.register(matrixRoutes, context);
  await app.register(instancesRoutes, context);
  await app.register(timeseriesRoutes, context);
  await app.register(filterRoutes, context);
  await app.register(examplesRoutes, context);
  await app.register(trendsRoutes, context);
};
