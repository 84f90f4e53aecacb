import type { FastifyPluginAsync } from 'fastify';
import type { AuthFailureLimit } from '../auth/failure-limit.js';
import type { BearerToken } from '../auth/bearer.js';
import { adminGuard } from '../auth/admin-guard.js';
import { type BackupRouteOptions, backupRoutes } from './backup/route.js';

export interface AdminOptions extends BackupRouteOptions {
  token: BearerToken | undefined;
  /** Whether an ingest or read token is set (then the admin routes need a token of their own). */
  otherTokens: boolean;
  failures: AuthFailureLimit | undefined;
}

/** Operations on the collector itself (registered under `/admin`, behind {@link adminGuard}). */
export const adminRoutes: FastifyPluginAsync<AdminOptions> = async (app, { token, otherTokens, failures, backup, idleMs, deadlineMs }) => {
  app.addHook('onRequest', adminGuard(token, otherTokens, failures));
  await app.register(backupRoutes, { backup, idleMs, deadlineMs });
};
