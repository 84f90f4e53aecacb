import { SeriesKind } from '../model/batches.js';
import type { StepTotal } from '../model/records.js';
import { MS_PER_MINUTE } from '../model/time.js';
import type { ExtensionCounts } from './matrix.js';
import { negotiatedShare } from './share.js';

/** More points than this is a step too small for the range. */
export const MAX_POINTS = 5000;
/** Steps chosen when none is given: the smallest that keeps the series under ~300 points. */
const AUTO_STEPS = [1, 5, 15, 60, 360, 1440, 10_080];
const AUTO_POINTS = 300;

interface TimeseriesPoint extends ExtensionCounts {
  tMs: number;
  requests: number;
  /** Of `requests`, those answered before any server instance existed: left out of the share. */
  serverUnknown: number;
  /** negotiated / (requests − serverUnknown); null without such requests. */
  negotiatedShare: number | null;
}

export interface Timeseries {
  fromMs: number;
  toMs: number;
  stepMinutes: number;
  points: TimeseriesPoint[];
}

/**
 * How long after a step ends its points can still arrive: the OpenTelemetry SDK's default metric export interval
 * (60 s). Until then a step's counts are short, and drawn as they are they would dip where nothing dipped.
 */
const EXPORT_LAG_MS = 60_000;

/**
 * The start of the first step of a series (steps of `stepMinutes` from `fromMs` to `toMs`) that may still receive
 * points at `nowMs`: the step under way, and the one before it within an export interval of its end. Null when every
 * step is complete.
 */
export function partialFrom(fromMs: number, toMs: number, stepMinutes: number, nowMs: number): number | null {
  const stepMs = stepMinutes * MS_PER_MINUTE;
  const first = fromMs + Math.max(0, Math.floor((nowMs - EXPORT_LAG_MS - fromMs) / stepMs)) * stepMs;
  return first < toMs ? first : null;
}

/** The step for a range when none is asked for. */
export function autoStep(fromMs: number, toMs: number): number {
  const spanMinutes = (toMs - fromMs) / MS_PER_MINUTE;
  return AUTO_STEPS.find((step) => spanMinutes / step <= AUTO_POINTS) ?? AUTO_STEPS[AUTO_STEPS.length - 1] ?? 1;
}

/** How many points a step gives over a range (before widening to whole steps). */
export function pointCount(fromMs: number, toMs: number, stepMinutes: number): number {
  return (toMs - fromMs) / MS_PER_MINUTE / stepMinutes;
}

/** The range widened to whole steps, aligned to the Unix epoch (UTC); never empty. */
export function alignToSteps(fromMs: number, toMs: number, stepMinutes: number): { fromMs: number; toMs: number } {
  const m0 = Math.floor(fromMs / MS_PER_MINUTE / stepMinutes) * stepMinutes;
  const m1 = Math.max(m0 + stepMinutes, Math.ceil(toMs / MS_PER_MINUTE / stepMinutes) * stepMinutes);
  return { fromMs: m0 * MS_PER_MINUTE, toMs: m1 * MS_PER_MINUTE };
}

/**
 * Step totals of an aligned range → one point per step (zeros included): all requests, and those where the
 * extension was declared by the client, advertised by the server, negotiated; with the negotiated share over the
 * requests whose server's declaration is known (`serverUnknown`: the request totals of the part answered before
 * any server instance existed).
 */
export function buildTimeseries(
  range: { fromMs: number; toMs: number },
  stepMinutes: number,
  totals: readonly StepTotal[],
  serverUnknown: readonly StepTotal[] = [],
): Timeseries {
  const stepMs = stepMinutes * MS_PER_MINUTE;
  const points: TimeseriesPoint[] = [];
  for (let tMs = range.fromMs; tMs < range.toMs; tMs += stepMs) {
    points.push({ tMs, requests: 0, serverUnknown: 0, clientDeclared: 0, serverAdvertised: 0, negotiated: 0, negotiatedShare: null });
  }
  for (const total of serverUnknown) {
    const point = points[(total.tMs - range.fromMs) / stepMs];
    if (point !== undefined && total.kind === SeriesKind.Requests) point.serverUnknown += total.count;
  }
  for (const total of totals) {
    const point = points[(total.tMs - range.fromMs) / stepMs];
    if (point === undefined) continue;
    if (total.kind === SeriesKind.Requests) point.requests += total.count;
    else {
      if (total.clientDeclared === true) point.clientDeclared += total.count;
      if (total.serverDeclared === true) point.serverAdvertised += total.count;
      if (total.negotiated === true) point.negotiated += total.count;
    }
  }
  for (const point of points) point.negotiatedShare = negotiatedShare(point.negotiated, point.requests, point.serverUnknown);
  return { fromMs: range.fromMs, toMs: range.toMs, stepMinutes, points };
}
