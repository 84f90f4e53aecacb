import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { MAX_POINTS, alignToSteps, autoStep, buildTimeseries, partialFrom, pointCount } from '../../../../analysis/timeseries.js';
import { badRequest, iso, parseRange, parseStep } from '../../../params.js';
import { readSignal } from '../../../read-signal.js';
import type { ApiContext } from '../context.js';
import { timeseriesSchema } from './schema.js';

/**
 * `GET /timeseries?extension=`: per step, all requests (within the filters) and those where the extension was
 * declared, advertised, negotiated; `serverUnknown`, the requests answered before any server instance existed;
 * `negotiatedShare` = negotiated / (requests − serverUnknown) (null without such requests).
 * Without `to` it ends with the step that holds now.
 */
export const timeseriesRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (app, { reader, clock }) => {
  app.get('/timeseries', { schema: timeseriesSchema, config: { heavyRead: true } }, async (request) => {
    const { extension, service, client, step } = request.query;
    // Without `to`, the series ends with the step that holds now: no empty steps in the future.
    const now = clock();
    const range = parseRange(request.query, now);
    const stepMinutes = step === undefined ? autoStep(range.fromMs, range.toMs) : parseStep(step);
    if (pointCount(range.fromMs, range.toMs, stepMinutes) > MAX_POINTS) {
      throw badRequest(`step: ${step ?? stepMinutes} gives more than ${MAX_POINTS} points over this range`);
    }
    const aligned = alignToSteps(range.fromMs, range.toMs, stepMinutes);
    const query = { ...aligned, extensionId: extension, stepMinutes, service, clientName: client, signal: readSignal(request) };
    const [totals, serverUnknown] = await Promise.all([reader.stepTotals(query), reader.serverUnknownStepTotals(query)]);
    const series = buildTimeseries(aligned, stepMinutes, totals, serverUnknown);
    const partial = partialFrom(series.fromMs, series.toMs, series.stepMinutes, now);
    return {
      extension,
      from: iso(series.fromMs),
      to: iso(Math.min(series.toMs, now)),
      stepMinutes: series.stepMinutes,
      partialFrom: partial === null ? null : iso(partial),
      points: series.points.map((point) => ({
        t: iso(point.tMs),
        requests: point.requests,
        serverUnknown: point.serverUnknown,
        clientDeclared: point.clientDeclared,
        serverAdvertised: point.serverAdvertised,
        negotiated: point.negotiated,
        negotiatedShare: point.negotiatedShare,
      })),
    };
  });
};
