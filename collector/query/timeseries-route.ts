import type { FastifyPluginAsync } from 'fastify';
import { MAX_EXTENSION_ID_LENGTH } from '../../contract/index.js';
import type { QueryContext } from './context.js';
import { badRequest, iso, nameSchema, parseRange, parseStep, rangeProperties, stepSchema } from './params.js';

interface TimeseriesQuerystring {
  extension: string;
  from?: string;
  to?: string;
  step?: string;
  service?: string;
  client?: string;
}

/** More points than this is a step too small for the range. */
const MAX_POINTS = 5000;
/** Steps chosen when none is given: the smallest that keeps the series under ~300 points. */
const AUTO_STEPS = [1, 5, 15, 60, 360, 1440, 10_080];

const schema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    required: ['extension'],
    properties: {
      extension: { type: 'string', minLength: 1, maxLength: MAX_EXTENSION_ID_LENGTH },
      ...rangeProperties,
      step: stepSchema,
      service: nameSchema,
      client: nameSchema,
    },
  },
  response: {
    200: {
      type: 'object',
      required: ['extension', 'from', 'to', 'stepMinutes', 'points'],
      properties: {
        extension: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        stepMinutes: { type: 'integer' },
        points: {
          type: 'array',
          items: {
            type: 'object',
            required: ['t', 'requests', 'clientDeclared', 'serverAdvertised', 'negotiated', 'negotiatedShare'],
            properties: {
              t: { type: 'string' },
              requests: { type: 'integer' },
              clientDeclared: { type: 'integer' },
              serverAdvertised: { type: 'integer' },
              negotiated: { type: 'integer' },
              negotiatedShare: { type: ['number', 'null'] },
            },
          },
        },
      },
    },
  },
} as const;

/**
 * `GET /timeseries?extension=`: per step, all requests (within the filters) and those where the extension was
 * declared, advertised, negotiated; `negotiatedShare` = negotiated / requests (null without requests).
 */
export const timeseriesRoute: FastifyPluginAsync<QueryContext> = async (app, { store, clock, openEndMs }) => {
  app.get<{ Querystring: TimeseriesQuerystring }>('/timeseries', { schema }, async (request) => {
    const { extension, service, client } = request.query;
    const range = parseRange(request.query, clock(), openEndMs);
    const spanMinutes = (range.toMs - range.fromMs) / 60_000;
    const stepMinutes =
      request.query.step === undefined
        ? (AUTO_STEPS.find((step) => spanMinutes / step <= 300) ?? AUTO_STEPS[AUTO_STEPS.length - 1] ?? 1)
        : parseStep(request.query.step);
    if (spanMinutes / stepMinutes > MAX_POINTS) {
      throw badRequest(`step: ${request.query.step ?? stepMinutes} gives more than ${MAX_POINTS} points over this range`);
    }
    const result = await store.timeseries({ ...range, extensionId: extension, stepMinutes, service, clientName: client });
    return {
      extension,
      from: iso(result.fromMs),
      to: iso(result.toMs),
      stepMinutes: result.stepMinutes,
      points: result.points.map((point) => ({
        t: iso(point.tMs),
        requests: point.requests,
        clientDeclared: point.clientDeclared,
        serverAdvertised: point.serverAdvertised,
        negotiated: point.negotiated,
        negotiatedShare: point.requests === 0 ? null : point.negotiated / point.requests,
      })),
    };
  });
};
