import type { FastifyPluginAsync } from 'fastify';
import { alertsRoutes } from './alerts/route.js';
import { buildsRoutes } from './builds/route.js';
import { changesRoutes } from './changes/route.js';
import type { ApiContext } from './context.js';
import { examplesRoutes } from './examples/route.js';
import { filterRoutes } from './filters/route.js';
import { instancesRoutes } from './instances/route.js';
import { matrixRoutes } from './matrix/route.js';
import { matrixCellRoutes } from './matrix-cell/route.js';
import { rejectionsRoutes } from './rejections/route.js';
import { timeseriesRoutes } from './timeseries/route.js';
import { trendsRoutes } from './trends/route.js';
import { watchAbandonment } from '../../read-signal.js';

export type { ApiContext } from './context.js';

/** Set (to `true`) on read answers that may not include everything accepted yet. */
export const DATA_BEHIND_HEADER = 'x-extscope-data-behind';

/** The read API (registered under `/api/v1`, behind the read token): each resource a plugin of its own. */
export const apiV1: FastifyPluginAsync<ApiContext> = async (app, { reader, clock, staleAfterMs, instanceTtlMs, endedTtlMs, alerts, rejections, traceUrl }) => {
  // A fresh object: the registration options also carry this plugin's own prefix.
  const context: ApiContext = { reader, clock, staleAfterMs, instanceTtlMs, endedTtlMs, alerts, rejections, traceUrl };
  app.addHook('onRequest', watchAbandonment);
  // While the store cannot write, reads answer from what is stored and say that it may be behind.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reader.behind()) reply.header(DATA_BEHIND_HEADER, 'true');
    return payload;
  });
  await app.register(matrixRoutes, context);
  await app.register(matrixCellRoutes, context);
  await app.register(instancesRoutes, context);
  await app.register(buildsRoutes, context);
  await app.register(timeseriesRoutes, context);
  await app.register(filterRoutes, context);
  await app.register(examplesRoutes, context);
  await app.register(trendsRoutes, context);
  await app.register(alertsRoutes, context);
  await app.register(rejectionsRoutes, context);
  await app.register(changesRoutes, context);
};
