import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import type { FromSchema } from 'json-schema-to-ts';
import { partialFrom } from '../../../../analysis/timeseries.js';
import { clientSeries, declarationSeries, extensionSeries, requiredSeries } from '../../../../analysis/trends.js';
import { MS_PER_MINUTE } from '../../../../model/time.js';
import type { TrendQuery, TrendResult } from '../../../../store/query/trends.js';
import { badRequest, iso, parseRange, parseStep } from '../../../params.js';
import { readSignal } from '../../../read-signal.js';
import type { ApiContext } from '../context.js';
import { clientsSchema, declarationsSchema, extensionsSchema, requiredSchema } from './schema.js';
/**
 * `GET /trends/declarations`, `/trends/clients`, `/trends/extensions`, `/trends/required`: the dashboard's
 * charts, one query each. Answers are columnar: `times` holds the start of every step, and every series is an
 * array of the same length (zeros included).
 */

/** What every trend takes (`/trends/required` also takes an extension id). */
type TrendQuerystring = FromSchema<typeof declarationsSchema.querystring> & { extension?: string };

/**
 * A trend sums rollup rows of every client: its cost follows the rows of the rollup level its step reads (minutes,
 * hours or days), not the steps it answers. Steps are chosen so that a level is read for at most about a day of
 * minutes or a week of hours, and explicit steps are bounded too: the collector's one thread also takes exports.
 */
const MAX_POINTS = 1000;
/** When no step is given: up to 6 h in minutes, up to 2 days in hours, longer in days. */
function autoStep(spanMinutes: number): number {
  if (spanMinutes <= 360) return spanMinutes <= 120 ? 1 : 5;
  if (spanMinutes <= 2 * 1440) return 60;
  return spanMinutes <= 60 * 1440 ? 1440 : 10_080;
}

function trendQuery(query: TrendQuerystring, context: ApiContext, signal: AbortSignal | undefined): TrendQuery {
  const range = parseRange(query, context.clock());
  const spanMinutes = (range.toMs - range.fromMs) / MS_PER_MINUTE;
  const stepMinutes = query.step === undefined ? autoStep(spanMinutes) : parseStep(query.step);
  if (spanMinutes / stepMinutes > MAX_POINTS) throw badRequest(`step: ${query.step ?? stepMinutes} gives more than ${MAX_POINTS} points over this range`);
  if (stepMinutes % 60 !== 0 && spanMinutes > 2 * 1440) throw badRequest('step: steps shorter than whole hours need a range of at most 2 days');
  if (stepMinutes % 1440 !== 0 && spanMinutes > 14 * 1440) throw badRequest('step: steps shorter than whole days need a range of at most 14 days');
  return { ...range, stepMinutes, service: query.service, instance: query.instance, clientName: query.client, extensionId: query.extension, signal };
}

/**
 * The range ends at now at the latest: the last step is the one under way, and holds nothing from after now.
 * `partialFrom` says from which step the counts are not final yet.
 */
function frameOf(result: TrendResult<unknown>, now: number): { from: string; to: string; stepMinutes: number; times: string[]; partialFrom: string | null } {
  const times = Array.from({ length: result.slots }, (_, index) => iso(result.fromMs + index * result.stepMinutes * MS_PER_MINUTE));
  const partial = partialFrom(result.fromMs, result.toMs, result.stepMinutes, now);
  return {
    from: iso(result.fromMs),
    to: iso(Math.min(result.toMs, now)),
    stepMinutes: result.stepMinutes,
    times,
    partialFrom: partial === null ? null : iso(partial),
  };
}

export const trendsRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (app, context) => {
  const { reader } = context;
  app.get('/trends/declarations', { schema: declarationsSchema, config: { heavyRead: true } }, async (request) => {
    const result = await reader.declarationTrend(trendQuery(request.query, context, readSignal(request)));
    return { ...frameOf(result, context.clock()), ...declarationSeries(result) };
  });

  app.get('/trends/clients', { schema: clientsSchema, config: { heavyRead: true } }, async (request) => {
    const result = await reader.clientTrend(trendQuery(request.query, context, readSignal(request)));
    return { ...frameOf(result, context.clock()), ...clientSeries(result, request.query.group ?? 'client', request.query.limit ?? 10) };
  });

  app.get('/trends/extensions', { schema: extensionsSchema, config: { heavyRead: true } }, async (request) => {
    const result = await reader.extensionTrend(trendQuery(request.query, context, readSignal(request)));
    return { ...frameOf(result, context.clock()), ...extensionSeries(result) };
  });

  app.get('/trends/required', { schema: requiredSchema, config: { heavyRead: true } }, async (request) => {
    const result = await reader.requiredTrend(trendQuery(request.query, context, readSignal(request)));
    return { ...frameOf(result, context.clock()), ...requiredSeries(result) };
  });
};
