import type { FastifyPluginAsyncJsonSchemaToTs } from '@fastify/type-provider-json-schema-to-ts';
import { iso } from '../../../params.js';
import type { ApiContext } from '../context.js';
import { alertsSchema } from './schema.js';

/**
 * `GET /alerts`: current and past alerts (each activation with its transitions), filtered by state, rule and
 * service, paged; and how the rules are evaluated. Only registered when the collector evaluates alert rules.
 */
export const alertsRoutes: FastifyPluginAsyncJsonSchemaToTs<{ Options: ApiContext }> = async (app, { alerts }) => {
  if (alerts === undefined) return;
  app.get('/alerts', { schema: alertsSchema }, async (request) => {
    const { state, rule, service, limit, offset } = request.query;
    const page = await alerts.states.alerts({
      states: state === undefined ? undefined : state === 'active' ? ['pending', 'firing'] : [state],
      rule,
      service,
      limit,
      offset,
    });
    const status = alerts.status();
    const next = offset + page.alerts.length;
    return {
      evaluation: {
        rulesFile: status.source ?? null,
        intervalSeconds: status.intervalMs / 1000,
        rules: status.rules,
        lastEvaluation: status.lastEvaluationMs === undefined ? null : iso(status.lastEvaluationMs),
      },
      total: page.total,
      nextOffset: next < page.total ? next : null,
      alerts: page.alerts.map((alert) => ({
        fingerprint: alert.fingerprint,
        rule: alert.rule,
        kind: alert.kind,
        severity: alert.severity,
        state: alert.state,
        labels: alert.labels,
        annotations: alert.annotations,
        activeSince: iso(alert.activeSinceMs),
        firingSince: alert.firingSinceMs === undefined ? null : iso(alert.firingSinceMs),
        resolvedAt: alert.resolvedAtMs === undefined ? null : iso(alert.resolvedAtMs),
        dashboardPath: alert.dashboardPath,
        transitions: alert.transitions.map((transition) => ({ from: transition.from, to: transition.to, at: iso(transition.atMs) })),
      })),
    };
  });
};
