import type { RuleKind } from '../../model/alerts.js';
import type { Rule } from '../rules/rule.js';
import { evaluateAdvertisementSkew } from './advertisement-skew.js';
import { evaluateClientRegression } from './client-regression.js';
import { evaluateExtensionWithdrawn } from './extension-withdrawn.js';
import type { Finding } from './finding.js';
import { evaluateMissingCapability } from './missing-capability.js';
import { evaluateNegotiationDrop } from './negotiation-drop.js';
import { evaluateNewExtensionId } from './new-extension-id.js';
import type { Snapshot } from './snapshot.js';
import { evaluateStaleInstance } from './stale-instance.js';

export type { Finding } from './finding.js';
export { type AlertDataSource, Snapshot } from './snapshot.js';

type Evaluators = { [Kind in RuleKind]: (rule: Rule<Kind>, snapshot: Snapshot) => Promise<Finding[]> };

/** One condition per rule kind. */
const CONDITIONS: Evaluators = {
  advertisement_skew: evaluateAdvertisementSkew,
  extension_withdrawn: evaluateExtensionWithdrawn,
  negotiation_drop: evaluateNegotiationDrop,
  client_regression: evaluateClientRegression,
  missing_capability: evaluateMissingCapability,
  new_extension_id: evaluateNewExtensionId,
  stale_instance: evaluateStaleInstance,
};

/** What holds for a rule now. */
export function evaluateCondition(rule: Rule, snapshot: Snapshot): Promise<Finding[]> {
  return (CONDITIONS[rule.kind] as (rule: Rule, snapshot: Snapshot) => Promise<Finding[]>)(rule, snapshot);
}
