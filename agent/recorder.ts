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
  private readonly guards: Record<'server' | 'method' | 'protocol' | 'client' | 'clientVersion' | 'extension' | 'outcome' | 'code', ValueGuard>;

  constructor(config: ResolvedConfig) {
    this.requests = new Tally(config.maxStreams);
    this.extensionRequests = new Tally(config.maxStreams);
    const onOverflow = (attribute: string): void =>
      this.overflow.add(attribute, () => ({ [ATTR_AGENT_ATTRIBUTE]: attribute }));
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
    this.errors.add(stage, () => ({ [ATTR_AGENT_STAGE]: stage }));
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
      this.overflow.add(METRIC_SERVER_EXTENSION_ADVERTISED, () => ({ [ATTR_AGENT_ATTRIBUTE]: METRIC_SERVER_EXTENSION_ADVERTISED }));
      return;
    }
    this.advertised.set(key, { server: serverAttributes, points });
  }

  record({ facts, server, outcome }: RequestRecord): void {
    const g = this.guards;
    const values: (string | undefined)[] = [
      server?.identity.name === undefined ? undefined : g.server.admit(server.identity.name),
      server?.identity.version === undefined ? undefined : g.server.admit(server.identity.version),
      g.method.admit(facts.method),
      facts.era,
      facts.protocolVersion === undefined ? undefined : g.protocol.admit(facts.protocolVersion),
      facts.clientName === undefined ? undefined : g.client.admit(facts.clientName),
      facts.clientVersion === undefined ? undefined : g.clientVersion.admit(facts.clientVersion),
      facts.client.declaration,
      server === undefined ? DECLARATION.unknown : server.extensions.declaration,
      g.outcome.admit(outcome.outcome),
      outcome.errorCode === undefined ? undefined : g.code.admit(String(outcome.errorCode)),
    ];
    const requestKey = values.map((value) => value ?? ABSENT).join(SEP);
    const requestAttributes = (): Attributes => {
      const attributes: Attributes = {};
      REQUEST_ATTRIBUTE_NAMES.forEach((name, index) => {
        const value = values[index];
        if (value !== undefined) attributes[name] = value;
      });
      return attributes;
    };
    this.requests.add(requestKey, requestAttributes);
    this.recordExtensions(requestKey, requestAttributes, facts.client, server, outcome.required);
  }

  private recordExtensions(
    requestKey: string,
    requestAttributes: () => Attributes,
    client: DeclaredExtensions,
    server: ServerView | undefined,
    required: DeclaredExtensions | undefined,
  ): void {
    const point = (id: string, clientDeclared: boolean, serverDeclared: boolean, isRequired: boolean): void => {
      const admitted = id === INVALID_EXTENSION_ID ? id : this.guards.extension.admit(id);
      const negotiated = clientDeclared && serverDeclared && admitted !== INVALID_EXTENSION_ID;
      const flags = `${+clientDeclared}${+serverDeclared}${+negotiated}${+isRequired}`;
      this.extensionRequests.add(`${requestKey}${SEP}${admitted}${SEP}${flags}`, () => ({
        ...requestAttributes(),
        [ATTR_EXTENSION_ID]: admitted,
        [ATTR_EXTENSION_CLIENT_DECLARED]: clientDeclared,
        [ATTR_EXTENSION_SERVER_DECLARED]: serverDeclared,
        [ATTR_EXTENSION_NEGOTIATED]: negotiated,
        [ATTR_EXTENSION_REQUIRED]: isRequired,
      }));
    };
    const serverIds = server?.ids;
    const requiredIds = required === undefined || required.ids.length === 0 ? undefined : new Set(required.ids);
    const clientIds = client.ids.length === 0 ? undefined : new Set(client.ids);
    for (const id of client.ids) point(id, true, serverIds?.has(id) ?? false, requiredIds?.has(id) ?? false);
    if (server !== undefined) {
      for (const id of server.extensions.ids) {
        if (clientIds?.has(id)) continue;
        point(id, false, true, requiredIds?.has(id) ?? false);
      }
    }
    if (requiredIds !== undefined) {
      for (const id of requiredIds) {
        if (clientIds?.has(id) || serverIds?.has(id)) continue;
        point(id, false, false, true);
      }
    }
    if (client.invalid > 0 || (server?.extensions.invalid ?? 0) > 0) {
      point(INVALID_EXTENSION_ID, client.invalid > 0, (server?.extensions.invalid ?? 0) > 0, false);
    }
    this.countRejected(client);
  }

  private countRejected(client: DeclaredExtensions): void {
    if (client.invalid > 0) this.rejectedIds.add('invalid', () => ({ [ATTR_AGENT_REASON]: 'invalid' }), client.invalid);
    if (client.dropped > 0) this.rejectedIds.add('too_many', () => ({ [ATTR_AGENT_REASON]: 'too_many' }), client.dropped);
  }
}

const REQUEST_ATTRIBUTE_NAMES = [
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
