import { RULE_KINDS, type RuleKind } from '../../model/alerts.js';
import type { RuleSpec, RuleSpecOf } from './schema.js';

/** The fields every rule has; the others are the kind's own options. */
type CommonField = 'name' | 'kind' | 'for' | 'severity' | 'labels' | 'annotations' | 'scope';
export type RuleOptions<Kind extends RuleKind> = Required<Omit<RuleSpecOf<Kind>, CommonField>>;

/** What a rule leaves out, per kind: its `for`, severity and options. */
export const KIND_DEFAULTS = {
  advertisement_skew: { for: '10m', severity: 'warning', options: { minInstances: 2 } },
  extension_withdrawn: { for: '5m', severity: 'warning', options: { level: 'service', lookback: '24h' } },
  negotiation_drop: { for: '10m', severity: 'warning', options: { window: '1h', baseline: '24h', drop: 20, minRequests: 100, perClient: false } },
  client_regression: { for: '0s', severity: 'warning', options: { window: '7d', minRequests: 10 } },
  missing_capability: { for: '5m', severity: 'warning', options: { window: '5m', ratePerMinute: 1 } },
  new_extension_id: { for: '0s', severity: 'info', options: { window: '1h', lookback: '30d' } },
  stale_instance: { for: '0s', severity: 'warning', options: { after: '10m', lookback: '24h', minUptime: '30m' } },
} as const satisfies { [Kind in RuleKind]: { for: string; severity: RuleSpec['severity']; options: RuleOptions<Kind> } };

export const DEFAULT_INTERVAL = '30s';

/** The rules evaluated when no rules file is given: one per kind, named after it, with the defaults above. */
export const DEFAULT_RULES: readonly RuleSpec[] = RULE_KINDS.map((kind) => ({ name: kind, kind }) as RuleSpec);
