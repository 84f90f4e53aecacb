/**
 * Reading a rules file: YAML (JSON is YAML too), checked against the schema and then for what a schema cannot
 * say (duplicate names, reserved labels, a scope the kind has no dimension for). Every error carries the line
 * and column of the node it is about, the way `promtool check rules` reports, so one run lists them all.
 */
import { Ajv, type ErrorObject } from 'ajv';
import { type Document, LineCounter, type Node, isMap, isPair, isScalar, isSeq, parseDocument, visit } from 'yaml';
import { ConfigError } from '../../model/errors.js';
import { RULE_KINDS, type RuleKind } from '../../model/alerts.js';
import { KIND_DEFAULTS } from './defaults.js';
import { parseDuration } from './duration.js';
import { INLINE_PARSE_CHARS, parseRulesOffThread } from './parse-off-thread.js';
import { readRulesText } from './read.js';
import { type RuleSet, resolveRules } from './rule.js';
import { DURATION_PATTERN, LABEL_NAME_PATTERN, type RulesFile, rulesFileSchema } from './schema.js';

export interface RuleError {
  line: number;
  column: number;
  /** Where in the file, e.g. `rules[1].for`; empty for the whole file. */
  path: string;
  message: string;
}

export type ParseOutcome = { ok: true; rules: RuleSet } | { ok: false; errors: RuleError[] };

/** Labels every alert gets from its rule; a rule's `labels` may not set them. */
const RESERVED_LABELS = new Set(['alertname', 'severity']);

/** The dimensions each kind's alerts have, and so what its `scope` may name. */
const SCOPES: Record<RuleKind, readonly ('services' | 'clients' | 'extensions')[]> = {
  advertisement_skew: ['services', 'extensions'],
  extension_withdrawn: ['services', 'extensions'],
  negotiation_drop: ['services', 'clients', 'extensions'],
  client_regression: ['services', 'clients', 'extensions'],
  missing_capability: ['services', 'clients', 'extensions'],
  new_extension_id: ['services', 'clients', 'extensions'],
  stale_instance: ['services'],
};

const DURATION = new RegExp(DURATION_PATTERN);

/** Options that are windows of time: zero would be an empty window. */
const WINDOWS = ['window', 'baseline', 'lookback', 'after'] as const;

const ajv = new Ajv({ allErrors: true, discriminator: true, allowUnionTypes: true });
const validate = ajv.compile<RulesFile>(rulesFileSchema);

type Segment = string | number;

/** The most of a value (or key) an error quotes: errors go to the log, which must never hold a whole value. */
const QUOTED_CHARS = 60;
/** The most errors listed for one file; the rest are counted. */
const LISTED_ERRORS = 100;
/** How often aliases may be expanded: enough for any real file, far too few for a "billion laughs". */
const MAX_ALIAS_COUNT = 100;

/** `text`, cut to `max` characters with how long it was. */
const cut = (text: string, max = QUOTED_CHARS): string => (text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`);

function pathText(segments: readonly Segment[]): string {
  return segments.map((segment, index) => (typeof segment === 'number' ? `[${segment}]` : index === 0 ? cut(segment) : `.${cut(segment)}`)).join('');
}

/** The node at a path, and the key node naming it (for errors about a key). */
function nodeAt(doc: Document, segments: readonly Segment[]): { node: Node | undefined; key: Node | undefined } {
  let node: unknown = doc.contents;
  let key: Node | undefined;
  for (const segment of segments) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && String(item.key.value) === String(segment));
      if (pair === undefined) return { node: node as Node, key };
      key = pair.key as Node;
      node = pair.value ?? pair.key;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment];
      if (item === undefined) return { node: node as Node, key };
      key = undefined;
      node = item;
    } else {
      break;
    }
  }
  return { node: node as Node | undefined, key };
}

const describe = (value: unknown): string =>
  typeof value === 'string'
    ? cut(JSON.stringify(value))
    : value === null
      ? 'null'
      : Array.isArray(value)
        ? 'a list'
        : typeof value === 'object'
          ? 'a mapping'
          : String(value);

/** One schema error in words, and the path it is about. */
function explain(error: ErrorObject, data: unknown): { segments: Segment[]; message: string; onKey: boolean } {
  const segments: Segment[] = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
  const value = segments.reduce<unknown>((at, segment) => (at as Record<string, unknown> | undefined)?.[segment], data);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return { segments: [...segments, String(params['additionalProperty'])], message: 'unknown field (not an option of this rule kind)', onKey: true };
    case 'required':
      return { segments, message: `missing required field "${String(params['missingProperty'])}"`, onKey: false };
    case 'discriminator':
      return {
        segments: [...segments, 'kind'],
        message: `unknown rule kind ${describe((value as Record<string, unknown> | undefined)?.['kind'])}: must be one of ${RULE_KINDS.join(', ')}`,
        onKey: false,
      };
    case 'pattern':
      if (params['pattern'] === DURATION_PATTERN)
        return { segments, message: `must be a duration such as 30s, 10m, 1h or 7d (got ${describe(value)})`, onKey: false };
      if (params['pattern'] === LABEL_NAME_PATTERN)
        return { segments, message: `must be a label name: letters, digits and _, not starting with a digit or __ (got ${describe(value)})`, onKey: false };
      return { segments, message: `${describe(value)} is not a valid name (letters, digits, _ . -; starting with a letter or _)`, onKey: false };
    case 'propertyNames':
      return {
        segments: [...segments, String(params['propertyName'])],
        message: 'is not a valid label name: letters, digits and _, not starting with a digit or __',
        onKey: true,
      };
    case 'enum':
      return { segments, message: `must be one of ${(params['allowedValues'] as unknown[]).join(', ')} (got ${describe(value)})`, onKey: false };
    case 'type':
      return {
        segments,
        message: `must be ${params['type'] === 'object' ? 'a mapping' : params['type'] === 'array' ? 'a list' : `a ${String(params['type'])}`} (got ${describe(value)})`,
        onKey: false,
      };
    default:
      return { segments, message: `${error.message ?? 'is invalid'} (got ${describe(value)})`, onKey: false };
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What the schema cannot check. Run on files the schema refused too (so that one run lists every error), hence
 * over what is there, not what the schema promised.
 */
function semanticErrors(data: unknown): { segments: Segment[]; message: string; onKey?: boolean }[] {
  const errors: { segments: Segment[]; message: string; onKey?: boolean }[] = [];
  if (!isRecord(data)) return errors;
  const file = data as Partial<RulesFile>;
  const seen = new Map<string, number>();
  (Array.isArray(file.rules) ? file.rules : []).forEach((rule, index) => {
    if (!isRecord(rule) || !RULE_KINDS.includes(rule.kind)) return;
    const first = seen.get(rule.name);
    if (first !== undefined) errors.push({ segments: ['rules', index, 'name'], message: `duplicate rule name ${describe(rule.name)} (also rules[${first}])` });
    else if (typeof rule.name === 'string') seen.set(rule.name, index);
    for (const label of Object.keys(isRecord(rule.labels) ? rule.labels : {})) {
      if (RESERVED_LABELS.has(label))
        errors.push({
          segments: ['rules', index, 'labels', label],
          message: `label "${label}" is set by extscope (${label === 'severity' ? "use the rule's severity field" : 'it is the rule name'})`,
          onKey: true,
        });
    }
    for (const dimension of ['services', 'clients', 'extensions'] as const) {
      if (isRecord(rule.scope) && rule.scope[dimension] !== undefined && !SCOPES[rule.kind].includes(dimension)) {
        errors.push({
          segments: ['rules', index, 'scope', dimension],
          message: `${rule.kind} alerts are not about ${dimension}: it may be scoped by ${SCOPES[rule.kind].join(', ')} only`,
          onKey: true,
        });
      }
    }
    for (const option of WINDOWS) {
      const text = (rule as Record<string, unknown>)[option];
      if (typeof text === 'string' && DURATION.test(text) && parseDuration(text) === 0)
        errors.push({ segments: ['rules', index, option], message: 'must be longer than 0 (a window of no time holds nothing)' });
    }
    if (rule.kind === 'negotiation_drop') {
      const window = parseDuration(String(rule.window ?? KIND_DEFAULTS.negotiation_drop.options.window));
      const baseline = parseDuration(String(rule.baseline ?? KIND_DEFAULTS.negotiation_drop.options.baseline));
      if (window > 0 && baseline > 0 && baseline < window)
        errors.push({ segments: ['rules', index, 'baseline'], message: 'must be at least as long as window (the baseline is what the window is compared to)' });
    }
  });
  if (typeof file.interval === 'string' && parseDuration(file.interval) < 1000) errors.push({ segments: ['interval'], message: 'must be at least 1s' });
  return errors;
}

/** Where the first alias of a document is: what an alias bomb's error points at. */
function firstAlias(doc: Document): number | undefined {
  let offset: number | undefined;
  visit(doc, {
    Alias(_key, node) {
      offset = node.range?.[0];
      return visit.BREAK;
    },
  });
  return offset;
}

/**
 * Parses and checks the text of a rules file; `source` names it in the result. Never throws on any text: what the
 * YAML library or the checks throw (an alias bomb, nesting too deep for the stack) is an error of the file too.
 */
export function parseRules(text: string, source: string): ParseOutcome {
  try {
    return parseRulesText(text, source);
  } catch (error) {
    return { ok: false, errors: [{ line: 1, column: 1, path: '', message: `cannot be parsed: ${cut((error as Error).message, 200)}` }] };
  }
}

function parseRulesText(text: string, source: string): ParseOutcome {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number | undefined): { line: number; column: number } => {
    const position = lines.linePos(offset ?? 0);
    return { line: position.line, column: position.col };
  };
  if (doc.errors.length > 0) {
    // The parser may report one mistake many times over (once per enclosing collection): each once.
    const unique = new Map<string, RuleError>();
    for (const error of doc.errors) {
      const found = {
        ...at(error.pos[0]),
        path: '',
        message: `not valid YAML: ${cut(error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? '', 200)}`,
      };
      unique.set(`${found.line}:${found.column}:${found.message}`, found);
    }
    return { ok: false, errors: [...unique.values()] };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    // The one way toJS fails on a document that parsed: aliases that expand too far ("billion laughs").
    const message = isAliasBomb(error)
      ? `aliases expand more than ${MAX_ALIAS_COUNT} times (an alias bomb); the file is not read`
      : `cannot be read as data: ${cut((error as Error).message, 200)}`;
    return { ok: false, errors: [{ ...at(firstAlias(doc)), path: '', message: `not valid YAML: ${message}` }] };
  }
  if (data === null || data === undefined) {
    return { ok: false, errors: [{ line: 1, column: 1, path: '', message: 'the file is empty: expected a mapping with a "rules" list' }] };
  }
  const located = (segments: Segment[], message: string, onKey = false): RuleError => {
    const { node, key } = nodeAt(doc, segments);
    const target = onKey && key !== undefined ? key : node;
    return { ...at(target?.range?.[0]), path: pathText(segments), message };
  };
  const errors = new Map<string, RuleError>();
  const add = (found: RuleError): void => void errors.set(`${found.line}:${found.column}:${found.message}`, found);
  for (const error of semanticErrors(data)) add(located(error.segments, error.message, error.onKey));
  if (!validate(data) || errors.size > 0) {
    for (const error of validate.errors ?? []) {
      // A discriminator branch that failed also fails the oneOf around it: the branch's own errors say why.
      if (error.keyword === 'oneOf') continue;
      const { segments, message, onKey } = explain(error, data);
      add(located(segments, message, onKey));
    }
    return { ok: false, errors: [...errors.values()].sort((a, b) => a.line - b.line || a.column - b.column) };
  }
  return { ok: true, rules: resolveRules(data, source) };
}

const isAliasBomb = (error: unknown): boolean => error instanceof Error && /alias count/i.test(error.message);

/**
 * `FILE:LINE:COLUMN: PATH: REASON`, one line per error (no line and column for a file that cannot be read): what
 * `extscope rules check` prints and the collector refuses to start with. At most {@link LISTED_ERRORS} lines, and a
 * last one counting the rest.
 */
export function formatRuleErrors(source: string, errors: readonly RuleError[]): string {
  const listed = errors
    .slice(0, LISTED_ERRORS)
    .map((error) => `${source}${error.line > 0 ? `:${error.line}:${error.column}` : ''}: ${error.path === '' ? '' : `${error.path}: `}${error.message}`);
  if (errors.length > LISTED_ERRORS) listed.push(`${source}: … and ${errors.length - LISTED_ERRORS} more errors`);
  return listed.join('\n');
}

/** An invalid rules file: the message lists every error with its line. */
export class RulesFileError extends ConfigError {
  constructor(
    readonly source: string,
    readonly errors: readonly RuleError[],
  ) {
    // One error, one line (`invalid rules file FILE:LINE:COL: reason`); several, a header and a line each.
    super(
      errors.length === 1
        ? `invalid rules file ${formatRuleErrors(source, errors)}`
        : `invalid rules file ${source} (${errors.length} errors):\n${formatRuleErrors(source, errors)}`,
    );
  }
}

/** Reads the text of a rules file and checks it (see read.ts for what is read); the errors, if any, as {@link parseRules} gives them. */
export async function checkRulesFile(path: string): Promise<ParseOutcome> {
  const read = await readRulesText(path);
  if (!read.ok) return { ok: false, errors: [{ line: 0, column: 0, path: '', message: read.message }] };
  return read.text.length > INLINE_PARSE_CHARS ? parseRulesOffThread(read.text, path) : parseRules(read.text, path);
}

/** Reads and checks a rules file; throws {@link RulesFileError} (also when it cannot be read). */
export async function loadRulesFile(path: string): Promise<RuleSet> {
  const outcome = await checkRulesFile(path);
  if (!outcome.ok) throw new RulesFileError(path, outcome.errors);
  return outcome.rules;
}
