import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api';
import type { DeclaredExtensions } from '../observe/extension-map.js';
import type { Outcome, RequestFacts } from '../observe/request-facts.js';
import { ATTR_AGENT_ATTRIBUTE, ATTR_AGENT_REASON, ATTR_AGENT_STAGE, ATTR_CLIENT_DECLARATION, ATTR_CLIENT_NAME, ATTR_CLIENT_VERSION, ATTR_ERA, ATTR_EXTENSION_CLIENT_DECLARED, ATTR_EXTENSION_FINGERPRINT, ATTR_EXTENSION_ID, ATTR_EXTENSION_NEGOTIATED, ATTR_EXTENSION_REQUIRED, ATTR_EXTENSION_SERVER_DECLARED, ATTR_MCP_METHOD_NAME, ATTR_MCP_PROTOCOL_VERSION, ATTR_OUTCOME, ATTR_RPC_RESPONSE_STATUS_CODE, ATTR_SERVER_DECLARATION, ATTR_SERVER_NAME, ATTR_SERVER_VERSION, DECLARATION, INVALID_EXTENSION_ID, METRIC_AGENT_ERRORS, METRIC_AGENT_IDS_REJECTED, METRIC_AGENT_OVERFLOW, METRIC_EXTENSION_REQUESTS, METRIC_REQUESTS, METRIC_SERVER_EXTENSIONS, METRIC_SERVER_EXTENSION_ADVERTISED, OVERFLOW_VALUE } from '../../contract/index.js';
import type { ServerView } from '../observe/server-advertisement.js';
import { Tally } from './counter-streams.js';
import type { ResolvedConfig } from '../types.js';
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
  // The last request's raw attribute inputs, and what they became: steady traffic repeats them, and a repeat
  // reuses the key string (whose hash V8 has cached) without re-admitting or re-joining anything.
  private readonly raw: (string | number | undefined)[] = new Array(REQUEST_ATTRIBUTES.length).fill(undefined);
  private readonly lastRaw: (string | number | undefined)[] = new Array(REQUEST_ATTRIBUTES.length).fill(ABSENT);
  private readonly values: (string | undefined)[] = new Array(REQUEST_ATTRIBUTES.length).fill(undefined);
  private key = '';
  private folded: string[] = [];
  // Inner keys per extension id and flag combination, built once (cached strings hash once).
  private readonly innerKeys = new Map<string, string[]>();
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
    const raw = this.raw;
    raw[0] = server?.identity.name;
    raw[1] = server?.identity.version;
    raw[2] = facts.method;
    raw[3] = facts.era;
    raw[4] = facts.protocolVersion;
    raw[5] = facts.clientName;
    raw[6] = facts.clientVersion;
    raw[7] = facts.client.declaration;
    raw[8] = server === undefined ? DECLARATION.unknown : server.extensions.declaration;
    raw[9] = outcome.outcome;
    raw[10] = outcome.errorCode;
    if (this.repeatsLast()) {
      for (const attribute of this.folded) this.overflow.add(attribute, '', { [ATTR_AGENT_ATTRIBUTE]: attribute });
    } else {
      this.admit();
    }
    const key = this.key;
    if (!this.requests.increment(key, '')) this.requests.create(key, '', requestAttributes(this.values));
    this.recordExtensions(key, facts.client, server, outcome.required);
  }

  private repeatsLast(): boolean {
    const { raw, lastRaw } = this;
    for (let i = 0; i < raw.length; i++) if (raw[i] !== lastRaw[i]) return false;
    return true;
  }

  /** Runs the raw inputs through the cardinality guards into `values` and the joined `key`. */
  private admit(): void {
    const { raw, values, guards: g } = this;
    const guarded = (guard: ValueGuard, value: string | number | undefined): string | undefined =>
      value === undefined ? undefined : guard.admit(String(value));
    values[0] = guarded(g.server, raw[0]);
    values[1] = guarded(g.server, raw[1]);
    values[2] = guarded(g.method, raw[2]);
    values[3] = raw[3] as string;
    values[4] = guarded(g.protocol, raw[4]);
    values[5] = guarded(g.client, raw[5]);
    values[6] = guarded(g.clientVersion, raw[6]);
    values[7] = raw[7] as string;
    values[8] = raw[8] as string;
    values[9] = guarded(g.outcome, raw[9]);
    values[10] = guarded(g.code, raw[10]);
    this.folded = [];
    values.forEach((value, index) => {
      if (value === OVERFLOW_VALUE && raw[index] !== OVERFLOW_VALUE) this.folded.push(REQUEST_ATTRIBUTES[index]!);
    });
    // Joined by a control character; ABSENT stands for a missing attribute.
    this.key = values.map((value) => value ?? ABSENT).join(SEP);
    for (let i = 0; i < raw.length; i++) this.lastRaw[i] = raw[i];
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
    let inners = this.innerKeys.get(admitted);
    if (inners === undefined) {
      inners = FLAG_SUFFIX.map((suffix) => admitted + suffix);
      this.innerKeys.set(admitted, inners);
    }
    const inner = inners[flags]!;
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

