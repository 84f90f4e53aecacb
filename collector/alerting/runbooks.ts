import type { RuleKind } from '../model/alerts.js';

/** The runbooks: one section per rule kind (what the alert means, its likely causes, what to check), named after the kind. */
export const RUNBOOKS_URL = 'https://github.com/extscope/extscope/blob/main/docs/runbooks.md';

/** The `runbook_url` every alert of a kind carries unless its rule sets its own. */
export const runbookUrl = (kind: RuleKind): string => `${RUNBOOKS_URL}#${kind}`;
