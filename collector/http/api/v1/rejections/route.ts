import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { REJECTED_REASONS, rejectedCount } from '../../../../model/rejections.js';
import { iso } from '../../../params.js';
import type { ApiContext } from '../context.js';
import { rejectionsSchema } from './schema.js';

/** What a sender can do about each reason, after what the reason means. */
const REMEDIES = {
  no_instance_identity: 'Set service.instance.id (or keep host.name and process.pid in the resource), or send delta temporality.',
  no_start_time: 'Send start_time_unix_nano on cumulative points, or set service.instance.id.',
  too_old: 'The sender was cut off longer than the dedup window (EXTSCOPE_DEDUP_HOURS).',
  count_too_large: 'A stream reported more than 10^9 requests in a minute: a broken or hostile sender.',
} as const satisfies Record<keyof typeof REJECTED_REASONS, string>;

/**
 * `GET /rejections`: data points the collector refused one by one since it started, by reason and service, each
 * with what it means. Not served when no tally is kept.
 */
export const rejectionsRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (app, { rejections }) => {
  if (rejections === undefined) return;
  app.get('/rejections', { schema: rejectionsSchema }, async () => {
    const { sinceMs, entries } = rejections.summary();
    return {
      since: iso(sinceMs),
      total: rejectedCount(entries),
      rejections: entries.map((entry) => ({ ...entry, explanation: `Refused: ${REJECTED_REASONS[entry.reason]}. ${REMEDIES[entry.reason]}` })),
    };
  });
};
