import type { FastifyPluginAsync } from 'fastify';
import { MAX_EXTENSION_ID_LENGTH } from '../../contract/index.js';
import type { TrendQuery, TrendResult } from '../store/trends.js';
import type { QueryContext } from './context.js';
import { type Grouping, clientLabel } from './matrix-view.js';
import { badRequest, iso, nameSchema, nullableString, parseRange, parseStep, rangeProperties, stepSchema } from './params.js';

/**
 * `GET /trends/declarations`, `/trends/clients`, `/trends/extensions`, `/trends/required`: the dashboard's
 * charts, one query each. Answers are columnar: `times` holds the start of every step, and every series is an
 * array of the same length (zeros included).
 */

interface TrendQuerystring {
  from?: string;
  to?: string;
  step?: string;
  service?: string;
  instance?: string;
  client?: string;
  extension?: string;
  group?: Grouping;
  limit?: number;
}

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

const counts = { type: 'array', items: { type: 'integer' } } as const;
const common = {
  ...rangeProperties,
  step: stepSchema,
  service: nameSchema,
  instance: nameSchema,
  client: nameSchema,
} as const;
const frame = { from: { type: 'string' }, to: { type: 'string' }, stepMinutes: { type: 'integer' }, times: { type: 'array', items: { type: 'string' } } } as const;
const frameRequired = ['from', 'to', 'stepMinutes', 'times'] as const;

const declarationsSchema = {
  querystring: { type: 'object', additionalProperties: false, properties: common },
  response: {
    200: {
      type: 'object',
      required: [...frameRequired, 'requests', 'unknown', 'none', 'declared'],
      properties: { ...frame, requests: counts, unknown: counts, none: counts, declared: counts },
    },
  },
} as const;

const clientsSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: {
      ...common,
      group: { type: 'string', enum: ['client', 'client_version'], default: 'client' },
      limit: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    },
  },
  response: {
    200: {
      type: 'object',
      required: [...frameRequired, 'group', 'clients', 'other'],
      properties: {
        ...frame,
        group: { type: 'string' },
        clients: {
          type: 'array',
          items: {
            type: 'object',
            required: ['client', 'name', 'version', 'total', 'requests'],
            properties: { client: { type: 'string' }, name: nullableString, version: nullableString, total: { type: 'integer' }, requests: counts },
          },
        },
        other: {
          type: 'object',
          required: ['clients', 'total', 'requests'],
          properties: { clients: { type: 'integer' }, total: { type: 'integer' }, requests: counts },
        },
      },
    },
  },
} as const;

const extensionsSchema = {
  querystring: { type: 'object', additionalProperties: false, properties: common },
  response: {
    200: {
      type: 'object',
      required: [...frameRequired, 'requests', 'extensions'],
      properties: {
        ...frame,
        requests: counts,
        extensions: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'clientDeclared', 'serverAdvertised', 'negotiated', 'negotiatedShare'],
            properties: {
              id: { type: 'string' },
              clientDeclared: counts,
              serverAdvertised: counts,
              negotiated: counts,
              negotiatedShare: { type: 'array', items: { type: ['number', 'null'] } },
            },
          },
        },
      },
    },
  },
} as const;

const requiredSchema = {
  querystring: {
    type: 'object',
    additionalProperties: false,
    properties: { ...common, extension: { type: 'string', minLength: 1, maxLength: MAX_EXTENSION_ID_LENGTH } },
  },
  response: {
    200: {
      type: 'object',
      required: [...frameRequired, 'total', 'errors', 'extensions'],
      properties: {
        ...frame,
        total: { type: 'integer' },
        errors: counts,
        extensions: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'total', 'counts', 'clients'],
            properties: {
              id: { type: 'string' },
              total: { type: 'integer' },
              counts,
              clients: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['client', 'name', 'version', 'count'],
                  properties: { client: { type: 'string' }, name: nullableString, version: nullableString, count: { type: 'integer' } },
                },
              },
            },
          },
        },
      },
    },
  },
} as const;

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function trendQuery(query: TrendQuerystring, context: QueryContext): TrendQuery {
  const range = parseRange(query, context.clock(), context.openEndMs);
  const spanMinutes = (range.toMs - range.fromMs) / 60_000;
  const stepMinutes = query.step === undefined ? autoStep(spanMinutes) : parseStep(query.step);
  if (spanMinutes / stepMinutes > MAX_POINTS) throw badRequest(`step: ${query.step ?? stepMinutes} gives more than ${MAX_POINTS} points over this range`);
  if (stepMinutes % 60 !== 0 && spanMinutes > 2 * 1440) throw badRequest('step: steps shorter than whole hours need a range of at most 2 days');
  if (stepMinutes % 1440 !== 0 && spanMinutes > 14 * 1440) throw badRequest('step: steps shorter than whole days need a range of at most 14 days');
  return { ...range, stepMinutes, service: query.service, instance: query.instance, clientName: query.client, extensionId: query.extension };
}

function frameOf(result: TrendResult<unknown>): { from: string; to: string; stepMinutes: number; times: string[] } {
  const times = Array.from({ length: result.slots }, (_, index) => iso(result.fromMs + index * result.stepMinutes * 60_000));
  return { from: iso(result.fromMs), to: iso(result.toMs), stepMinutes: result.stepMinutes, times };
}

const zeros = (length: number): number[] => new Array<number>(length).fill(0);

export const trendsRoute: FastifyPluginAsync<QueryContext> = async (app, context) => {
  const { store } = context;

  app.get<{ Querystring: TrendQuerystring }>('/trends/declarations', { schema: declarationsSchema }, async (request) => {
    const result = await store.declarationTrend(trendQuery(request.query, context));
    const series = { requests: zeros(result.slots), unknown: zeros(result.slots), none: zeros(result.slots), declared: zeros(result.slots) };
    for (const row of result.rows) {
      if (row.slot < 0 || row.slot >= result.slots) continue;
      series.requests[row.slot] = (series.requests[row.slot] ?? 0) + row.requests;
      const state = row.declaration;
      if (state === 'unknown' || state === 'none' || state === 'declared') series[state][row.slot] = (series[state][row.slot] ?? 0) + row.requests;
    }
    return { ...frameOf(result), ...series };
  });

  app.get<{ Querystring: TrendQuerystring }>('/trends/clients', { schema: clientsSchema }, async (request) => {
    const group = request.query.group ?? 'client';
    const limit = request.query.limit ?? 10;
    const result = await store.clientTrend(trendQuery(request.query, context));
    const clients = new Map<string, { client: string; name: string | null; version: string | null; total: number; requests: number[] }>();
    for (const row of result.rows) {
      if (row.slot < 0 || row.slot >= result.slots) continue;
      const version = group === 'client' ? null : row.version;
      const label = clientLabel(row.name, row.version, group);
      let entry = clients.get(label);
      if (entry === undefined) clients.set(label, (entry = { client: label, name: row.name, version, total: 0, requests: zeros(result.slots) }));
      entry.total += row.requests;
      entry.requests[row.slot] = (entry.requests[row.slot] ?? 0) + row.requests;
    }
    const ranked = [...clients.values()].sort((a, b) => b.total - a.total || byText(a.client, b.client));
    const other = { clients: 0, total: 0, requests: zeros(result.slots) };
    for (const rest of ranked.slice(limit)) {
      other.clients++;
      other.total += rest.total;
      rest.requests.forEach((value, index) => (other.requests[index] = (other.requests[index] ?? 0) + value));
    }
    return { ...frameOf(result), group, clients: ranked.slice(0, limit), other };
  });

  app.get<{ Querystring: TrendQuerystring }>('/trends/extensions', { schema: extensionsSchema }, async (request) => {
    const result = await store.extensionTrend(trendQuery(request.query, context));
    const requests = zeros(result.slots);
    const extensions = new Map<string, { id: string; clientDeclared: number[]; serverAdvertised: number[]; negotiated: number[] }>();
    for (const row of result.rows) {
      if (row.slot < 0 || row.slot >= result.slots) continue;
      if (row.id === null) {
        requests[row.slot] = (requests[row.slot] ?? 0) + row.requests;
        continue;
      }
      let entry = extensions.get(row.id);
      if (entry === undefined) {
        extensions.set(row.id, (entry = { id: row.id, clientDeclared: zeros(result.slots), serverAdvertised: zeros(result.slots), negotiated: zeros(result.slots) }));
      }
      entry.clientDeclared[row.slot] = (entry.clientDeclared[row.slot] ?? 0) + row.clientDeclared;
      entry.serverAdvertised[row.slot] = (entry.serverAdvertised[row.slot] ?? 0) + row.serverAdvertised;
      entry.negotiated[row.slot] = (entry.negotiated[row.slot] ?? 0) + row.negotiated;
    }
    const list = [...extensions.values()]
      .sort((a, b) => byText(a.id, b.id))
      .map((entry) => ({ ...entry, negotiatedShare: entry.negotiated.map((n, index) => ((requests[index] ?? 0) === 0 ? null : n / (requests[index] ?? 1))) }));
    return { ...frameOf(result), requests, extensions: list };
  });

  app.get<{ Querystring: TrendQuerystring }>('/trends/required', { schema: requiredSchema }, async (request) => {
    const result = await store.requiredTrend(trendQuery(request.query, context));
    const errors = zeros(result.slots);
    const extensions = new Map<string, { id: string; total: number; counts: number[]; clients: Map<string, { client: string; name: string | null; version: string | null; count: number }> }>();
    for (const row of result.rows) {
      if (row.slot < 0 || row.slot >= result.slots) continue;
      if (row.id === null) {
        errors[row.slot] = (errors[row.slot] ?? 0) + row.count;
        continue;
      }
      let entry = extensions.get(row.id);
      if (entry === undefined) extensions.set(row.id, (entry = { id: row.id, total: 0, counts: zeros(result.slots), clients: new Map() }));
      entry.total += row.count;
      entry.counts[row.slot] = (entry.counts[row.slot] ?? 0) + row.count;
      const label = clientLabel(row.name, row.version, 'client_version');
      const client = entry.clients.get(label) ?? { client: label, name: row.name, version: row.version, count: 0 };
      client.count += row.count;
      entry.clients.set(label, client);
    }
    const list = [...extensions.values()]
      .sort((a, b) => b.total - a.total || byText(a.id, b.id))
      .map((entry) => ({ ...entry, clients: [...entry.clients.values()].sort((a, b) => b.count - a.count || byText(a.client, b.client)) }));
    return { ...frameOf(result), total: errors.reduce((sum, value) => sum + value, 0), errors, extensions: list };
  });
};
