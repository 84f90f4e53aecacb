import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api';
import type { DeclaredExtensions } from './extension-map.js';
import type { Outcome, RequestFacts } from './request-facts.js';
import {
  ATTR_AGENT_ATTRIBUTE,
  ATTR_AGENT_REASON,
  ATTR_AGENT_STAGE,
  ATTR_CLIENT_DECLARATION,
  ATTR_CLIENT_NAME,
  ATTR_CLIENT_VERSION,
  ATTR_ERA,
  ATTR_EXTENSION_CLIENT_DECLARED,
  ATTR_EXTENSION_FINGERPRINT,
  ATTR_EXTENSION_ID,
  ATTR_EXTENSION_NEGOTIATED,
  ATTR_EXTENSION_REQUIRED,
  ATTR_EXTENSION_SERVER_DECLARED,
  ATTR_MCP_METHOD_NAME,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_OUTCOME,
  ATTR_RPC_RESPONSE_STATUS_CODE,
  ATTR_SERVER_DECLARATION,
  ATTR_SERVER_NAME,
  ATTR_SERVER_VERSION,
  DECLARATION,
  INVALID_EXTENSION_ID,
  METRIC_AGENT_ERRORS,
  METRIC_AGENT_IDS_REJECTED,
  METRIC_AGENT_OVERFLOW,
  METRIC_EXTENSION_REQUESTS,
  METRIC_REQUESTS,
  METRIC_SERVER_EXTENSIONS,
  METRIC_SERVER_EXTENSION_ADVERTISED,
} from './semconv.js';
import type { ServerView } from './server-view.js';
import { Tally } from './tally.js';
import type { ResolvedConfig } from './types.js';
import { ValueGuard } from './value-guard.js';

const SEP = '\u0001';
const ABSENT = '\u0002';
const MAX_VALUE_LENGTH = 256;
const MAX_ADVERTISED_VARIANTS = 256;
const NO_IDS: readonly string[] = [];
const FLAG_SUFFIX = Array.from({ length: 16 }, (_, flags) => `${SEP}${flags.toString(16)}`);

/** The per-request attributes, in the order {@link Recorder.record} fills its values. */
const REQUEST_ATTRIBUTES = [
  ATTR_SERVER_NAME,
  ATTR_SERVER_VERSION,
  ATTR_MCP_METHOD_NAME,
  ATTR_ERA,
  ATTR_MCP_PROTOCOL_VERSION,
  ATTR_CLIENT_NAME,
  ATTR_CLIENT_VERSION,
  ATTR_CLIENT_DECLARATION,
  ATTR_SERVER_DECLARATION,
  ATTR_OUTCOME,
  ATTR_RPC_RESPONSE_STATUS_CODE,
] as const;

function requestAttributes(values: readonly (string | undefined)[]): Attributes {
  const attributes: Attributes = {};
  REQUEST_ATTRIBUTES.forEach((name, index) => {
    const value = values[index];
    if (value !== undefined) attributes[name] = value;
  });
  return attributes;
}

/**
 * Builds the string key of a request's attribute values, reusing the previous key when the values repeat
 * (steady traffic): the reused string's hash is cached by V8, a freshly joined one must be hashed again.
 */
class KeyMemo {
  private readonly last: (string | undefined)[] = [];
  private lastKey = '';

  key(values: readonly (string | undefined)[]): string {
    const last = this.last;
    let same = last.length === values.length;
    for (let i = 0; same && i < values.length; i++) same = last[i] === values[i];
    if (same) return this.lastKey;
    for (let i = 0; i < values.length; i++) last[i] = values[i];
    last.length = values.length;
    // Joined by a control character; ABSENT stands for a missing attribute.
    this.lastKey = values.map((value) => value ?? ABSENT).join(SEP);
    return this.lastKey;
  }
}

/** One request as the metrics see it: facts, the server it reached (if any), and its outcome. */
export interface RequestRecord {
  facts: RequestFacts;
  /** `undefined` when the request was answered before any server instance existed. */
  server: ServerView | undefined;
  outcome: Outcome;
}

interface AdvertisedVariant {
  server: Attributes;
  points: { id: string; fingerprint: string }[];
}

/**
 * Turns finished requests into metric points: the per-request and per-extension sums, the advertised-extension
 * gauges, and the agent's own health counts. Every client-controlled value passes a {@link ValueGuard}.
 */
export class Recorder {
  readonly requests: Tally;
  readonly extensionRequests: Tally;
  readonly rejectedIds = new Tally();
  readonly overflow = new Tally();
  readonly errors = new Tally();
  private readonly advertised = new Map<string, AdvertisedVariant>();
  private readonly keys = new KeyMemo();
  private readonly values: (string | undefined)[] = new Array(REQUEST_ATTRIBUTES.length).fill(undefined);
  private readonly guards: Record<'server' | 'method' | 'protocol' | 'client' | 'clientVersion' | 'extension' | 'outcome' | 'code', ValueGuard>;

  constructor(config: ResolvedConfig) {
    this.requests = new Tally(config.maxStreams);
    this.extensionRequests = new Tally(config.maxStreams);
    const onOverflow = (attribute: string): void =>
      this.overflow.add(attribute, '', { [ATTR_AGENT_ATTRIBUTE]: attribute });
    const guard = (attribute: string, limit = config.cardinalityLimit): ValueGuard =>
      new ValueGuard(attribute, limit, MAX_VALUE_LENGTH, onOverflow);
    this.guards = {
      server: guard(ATTR_SERVER_NAME),
      method: guard(ATTR_MCP_METHOD_NAME),
      protocol: guard(ATTR_MCP_PROTOCOL_VERSION),
      client: guard(ATTR_CLIENT_NAME),
      clientVersion: guard(ATTR_CLIENT_VERSION),
      extension: guard(ATTR_EXTENSION_ID),
      outcome: guard(ATTR_OUTCOME),
      code: guard(ATTR_RPC_RESPONSE_STATUS_CODE),
    };
  }

  /** (Re)creates the observable instruments on a meter; counts live here, so nothing is lost on a swap. */
  bind(meter: Meter): void {
    const sum = (name: string, description: string, unit: string, tally: Tally): void => {
      meter
        .createObservableCounter(name, { description, unit })
        .addCallback((result: ObservableResult) => tally.observe(result));
    };
    sum(METRIC_REQUESTS, 'MCP requests answered or cancelled, by client declaration state and outcome', '{request}', this.requests);
    sum(METRIC_EXTENSION_REQUESTS, 'MCP requests per extension id either side declared', '{request}', this.extensionRequests);
    sum(METRIC_AGENT_IDS_REJECTED, 'Extension ids not recorded (invalid or over the per-request cap)', '{id}', this.rejectedIds);
    sum(METRIC_AGENT_OVERFLOW, 'Attribute values folded into _OTHER by the cardinality cap', '{value}', this.overflow);
    sum(METRIC_AGENT_ERRORS, 'Internal agent errors, caught and counted', '{error}', this.errors);
    meter
      .createObservableGauge(METRIC_SERVER_EXTENSION_ADVERTISED, {
        description: 'Extensions a server advertises: 1 per id and settings fingerprint',
        unit: '{extension}',
      })
      .addCallback((result) => {
        for (const variant of this.advertised.values()) {
          for (const point of variant.points) {
            result.observe(1, {
              ...variant.server,
              [ATTR_EXTENSION_ID]: point.id,
              [ATTR_EXTENSION_FINGERPRINT]: point.fingerprint,
            });
          }
        }
      });
    meter
      .createObservableGauge(METRIC_SERVER_EXTENSIONS, {
        description: 'Number of extensions a server advertises (0 included)',
        unit: '{extension}',
      })
      .addCallback((result) => {
        for (const variant of this.advertised.values()) {
          result.observe(variant.points.length, variant.server);
        }
      });
  }

  countError(stage: string): void {
    this.errors.add(stage, '', { [ATTR_AGENT_STAGE]: stage });
  }

  /** Remembers what a connecting server advertises, for the gauges. */
  advertise(server: ServerView): void {
    const { name, version } = server.identity;
    const serverAttributes: Attributes = {
      ...(name !== undefined && { [ATTR_SERVER_NAME]: this.guards.server.admit(name) }),
      ...(version !== undefined && { [ATTR_SERVER_VERSION]: this.guards.server.admit(version) }),
    };
    const points = server.extensions.ids.map((id, index) => ({
      id: this.guards.extension.admit(id),
      fingerprint: server.fingerprints[index] ?? '',
    }));
    const key = [name ?? ABSENT, version ?? ABSENT, ...points.map((point) => `${point.id}=${point.fingerprint}`)].join(SEP);
    if (this.advertised.has(key)) return;
    if (this.advertised.size >= MAX_ADVERTISED_VARIANTS) {
      this.overflow.add(METRIC_SERVER_EXTENSION_ADVERTISED, '', { [ATTR_AGENT_ATTRIBUTE]: METRIC_SERVER_EXTENSION_ADVERTISED });
      return;
    }
    this.advertised.set(key, { server: serverAttributes, points });
  }

  record({ facts, server, outcome }: RequestRecord): void {
    const g = this.guards;
    // Filled in place, in REQUEST_ATTRIBUTES order: the hot path allocates nothing for a known stream.
    const values = this.values;
    values[0] = server?.identity.name === undefined ? undefined : g.server.admit(server.identity.name);
    values[1] = server?.identity.version === undefined ? undefined : g.server.admit(server.identity.version);
    values[2] = g.method.admit(facts.method);
    values[3] = facts.era;
    values[4] = facts.protocolVersion === undefined ? undefined : g.protocol.admit(facts.protocolVersion);
    values[5] = facts.clientName === undefined ? undefined : g.client.admit(facts.clientName);
    values[6] = facts.clientVersion === undefined ? undefined : g.clientVersion.admit(facts.clientVersion);
    values[7] = facts.client.declaration;
    values[8] = server === undefined ? DECLARATION.unknown : server.extensions.declaration;
    values[9] = g.outcome.admit(outcome.outcome);
    values[10] = outcome.errorCode === undefined ? undefined : g.code.admit(String(outcome.errorCode));
    const key = this.keys.key(values);
    if (!this.requests.increment(key, '')) this.requests.create(key, '', requestAttributes(values));
    this.recordExtensions(key, facts.client, server, outcome.required);
  }

  /** One point per id in the union of client, server and required ids (id lists are short: `includes`). */
  private recordExtensions(key: string, client: DeclaredExtensions, server: ServerView | undefined, required: DeclaredExtensions | undefined): void {
    const requiredIds = required?.ids ?? NO_IDS;
    const serverIds = server?.extensions.ids ?? NO_IDS;
    for (const id of client.ids) this.point(key, id, true, server?.ids.has(id) ?? false, requiredIds.includes(id));
    for (const id of serverIds) {
      if (!client.ids.includes(id)) this.point(key, id, false, true, requiredIds.includes(id));
    }
    for (const id of requiredIds) {
      if (!client.ids.includes(id) && !serverIds.includes(id)) this.point(key, id, false, false, true);
    }
    const serverInvalid = (server?.extensions.invalid ?? 0) > 0;
    if (client.invalid > 0 || serverInvalid) this.point(key, INVALID_EXTENSION_ID, client.invalid > 0, serverInvalid, false);
    this.countRejected(client);
  }

  private point(key: string, id: string, clientDeclared: boolean, serverDeclared: boolean, required: boolean): void {
    const admitted = id === INVALID_EXTENSION_ID ? id : this.guards.extension.admit(id);
    const negotiated = clientDeclared && serverDeclared && admitted !== INVALID_EXTENSION_ID;
    const flags = (clientDeclared ? 8 : 0) | (serverDeclared ? 4 : 0) | (negotiated ? 2 : 0) | (required ? 1 : 0);
    const inner = admitted + FLAG_SUFFIX[flags];
    if (this.extensionRequests.increment(key, inner)) return;
    this.extensionRequests.create(key, inner, {
      ...requestAttributes(this.values),
      [ATTR_EXTENSION_ID]: admitted,
      [ATTR_EXTENSION_CLIENT_DECLARED]: clientDeclared,
      [ATTR_EXTENSION_SERVER_DECLARED]: serverDeclared,
      [ATTR_EXTENSION_NEGOTIATED]: negotiated,
      [ATTR_EXTENSION_REQUIRED]: required,
    });
  }

  private countRejected(client: DeclaredExtensions): void {
    if (client.invalid > 0) this.rejectedIds.add('invalid', '', { [ATTR_AGENT_REASON]: 'invalid' }, client.invalid);
    if (client.dropped > 0) this.rejectedIds.add('too_many', '', { [ATTR_AGENT_REASON]: 'too_many' }, client.dropped);
  }
}

