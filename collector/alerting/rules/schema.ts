/**
 * The rules file (YAML or JSON), as a JSON schema: the loader validates against it and every rule type is
 * derived from it. One branch per rule kind, told apart by `kind`, so an option of another kind is an error.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { SEVERITIES } from '../../model/alerts.js';

/** `30s`, `10m`, `1h30m`, `7d`, `2w` (as Prometheus writes durations). */
export const DURATION_PATTERN = '^([0-9]+(ms|s|m|h|d|w))+$';
/** Prometheus label names; names starting with `__` are reserved there. */
export const LABEL_NAME_PATTERN = '^(?!__)[a-zA-Z_][a-zA-Z0-9_]*$';
/** A rule's name becomes its alerts' `alertname`. */
const RULE_NAME_PATTERN = '^[a-zA-Z_][a-zA-Z0-9_.-]*$';

const duration = { type: 'string', pattern: DURATION_PATTERN, maxLength: 32 } as const;
const names = { type: 'array', items: { type: 'string', minLength: 1, maxLength: 256 }, minItems: 1, maxItems: 1000, uniqueItems: true } as const;

/** What every rule has. */
const common = {
  name: { type: 'string', pattern: RULE_NAME_PATTERN, maxLength: 128 },
  /** How long the condition must hold before the alert fires (pending until then). */
  for: duration,
  severity: { type: 'string', enum: SEVERITIES },
  labels: {
    type: 'object',
    propertyNames: { pattern: LABEL_NAME_PATTERN, maxLength: 128 },
    additionalProperties: { type: 'string', maxLength: 1024 },
    maxProperties: 32,
  },
  /** `{{ $labels.service }}` and `{{ $value }}` are replaced, as in Prometheus. */
  annotations: {
    type: 'object',
    propertyNames: { pattern: LABEL_NAME_PATTERN, maxLength: 128 },
    additionalProperties: { type: 'string', maxLength: 4096 },
    maxProperties: 32,
  },
  /** Only these services, clients (by name) or extension ids; a list left out means all. */
  scope: {
    type: 'object',
    additionalProperties: false,
    properties: { services: names, clients: names, extensions: names },
  },
} as const;

const rule = <Kind extends string, Extra extends Record<string, JSONSchema>>(kind: Kind, extra: Extra) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['name', 'kind'],
    properties: { kind: { const: kind }, ...common, ...extra },
  }) as const;

const points = { type: 'number', exclusiveMinimum: 0, maximum: 100 } as const;
const count = { type: 'integer', minimum: 0, maximum: 1_000_000_000 } as const;

const advertisementSkewSchema = rule('advertisement_skew', {
  /** Live instances of the service needed before a difference counts. */
  minInstances: { type: 'integer', minimum: 2, maximum: 100_000 },
});
const extensionWithdrawnSchema = rule('extension_withdrawn', {
  /** `service`: no live instance of the service advertises it any more; `instance`: one instance stopped advertising it. */
  level: { type: 'string', enum: ['service', 'instance'] },
  /** Advertised within this long before now counts as "advertised before". */
  lookback: duration,
});
const negotiationDropSchema = rule('negotiation_drop', {
  /** The recent window whose negotiated share is compared. */
  window: duration,
  /** The trailing window before it, the baseline. */
  baseline: duration,
  /** Fires when the share fell by at least this many percentage points. */
  drop: points,
  /** Requests each window needs (per service, or per client when `perClient`) before it is compared. */
  minRequests: count,
  perClient: { type: 'boolean' },
});
const clientRegressionSchema = rule('client_regression', {
  /** The window in which both versions of the client were seen. */
  window: duration,
  /** Evidence on both sides: requests on which the previous version declared the id, and requests of the newest (none declaring it). */
  minRequests: count,
});
const missingCapabilitySchema = rule('missing_capability', {
  window: duration,
  /** Fires when `-32021` answers naming one extension id exceed this many per minute over the window. */
  ratePerMinute: { type: 'number', minimum: 0 },
});
const newExtensionIdSchema = rule('new_extension_id', {
  /** Ids that clients declared within this window… */
  window: duration,
  /** …and never in this long before it. */
  lookback: duration,
});
const staleInstanceSchema = rule('stale_instance', {
  /** Not heard from for longer than this. */
  after: duration,
  /** Instances silent for longer than this are gone, not stale (they stop alerting). */
  lookback: duration,
  /** Instances that reported for less than this before going silent are left out: short-lived processes (stdio sessions) end by design. */
  minUptime: duration,
});

const ruleSchema = {
  type: 'object',
  discriminator: { propertyName: 'kind' },
  required: ['kind'],
  oneOf: [
    advertisementSkewSchema,
    extensionWithdrawnSchema,
    negotiationDropSchema,
    clientRegressionSchema,
    missingCapabilitySchema,
    newExtensionIdSchema,
    staleInstanceSchema,
  ],
} as const;

export const rulesFileSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['rules'],
  properties: {
    /** How often the rules are evaluated. */
    interval: duration,
    rules: { type: 'array', items: ruleSchema, maxItems: 1000 },
  },
} as const;

export type RulesFile = FromSchema<typeof rulesFileSchema>;
export type RuleSpec = RulesFile['rules'][number];
export type RuleSpecOf<Kind extends RuleSpec['kind']> = Extract<RuleSpec, { kind: Kind }>;
