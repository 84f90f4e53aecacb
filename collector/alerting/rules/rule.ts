import type { RuleKind, Severity } from '../../model/alerts.js';
import { DEFAULT_INTERVAL, KIND_DEFAULTS, type RuleOptions } from './defaults.js';
import { parseDuration } from './duration.js';
import type { RuleSpec, RulesFile } from './schema.js';

export interface RuleScope {
  services?: ReadonlySet<string> | undefined;
  clients?: ReadonlySet<string> | undefined;
  extensions?: ReadonlySet<string> | undefined;
}

/** A rule as evaluated: the file's spec with every default filled in. */
export interface Rule<Kind extends RuleKind = RuleKind> {
  name: string;
  kind: Kind;
  severity: Severity;
  forMs: number;
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  scope: RuleScope;
  options: RuleOptions<Kind>;
}

export interface RuleSet {
  /** Where the rules came from: a file path, or undefined for the defaults. */
  source: string | undefined;
  intervalMs: number;
  rules: readonly Rule[];
}

const set = (list: readonly string[] | undefined): ReadonlySet<string> | undefined => (list === undefined ? undefined : new Set(list));

function resolveRule(spec: RuleSpec): Rule {
  const defaults = KIND_DEFAULTS[spec.kind];
  const { name, kind, for: forText, severity, labels, annotations, scope, ...options } = spec;
  return {
    name,
    kind,
    severity: severity ?? defaults.severity,
    forMs: parseDuration(forText ?? defaults.for),
    labels: labels ?? {},
    annotations: annotations ?? {},
    scope: { services: set(scope?.services), clients: set(scope?.clients), extensions: set(scope?.extensions) },
    options: { ...defaults.options, ...options } as RuleOptions<typeof kind>,
  };
}

export function resolveRules(file: RulesFile, source: string | undefined): RuleSet {
  return { source, intervalMs: parseDuration(file.interval ?? DEFAULT_INTERVAL), rules: file.rules.map(resolveRule) };
}
