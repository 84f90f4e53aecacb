import type { Attributes, Meter, ObservableResult } from '@opentelemetry/api';
import {
  ATTR_AGENT_ATTRIBUTE,
  ATTR_AGENT_REASON,
  ATTR_AGENT_STAGE,
  ATTR_EXTENSION_ID,
  ATTR_SERVER_NAME,
  ATTR_SERVER_VERSION,
  type AttributeSpec,
  DECLARATION,
  ERA,
  EXTENSION_ATTRIBUTES,
  type ExtensionDimKey,
  INVALID_EXTENSION_ID,
  METRICS,
  type MetricSpec,
  OVERFLOW_VALUE,
  REQUEST_ATTRIBUTES,
  type RequestDimKey,
  isNegotiated,
  REJECTED_ID_REASON,
} from '../../contract/index.js';
import type { DeclaredExtensions } from '../observe/extension-map.js';
import type { Outcome, RequestFacts } from '../observe/request-facts.js';
import type { ServerAdvertisement } from '../observe/server-advertisement.js';
import { CounterStreams, type Stream } from './counter-streams.js';
import { ValueGuard } from './value-guard.js';

/** One instrument's points at one moment (see {@link Recorder.snapshot}). */
export interface MetricSnapshot {
  metric: MetricSpec;
  points: { value: number; attributes: Attributes }[];
}

/** The recorder's own bounds (see the config's `cardinalityLimit` and `maxStreams`). */
export interface RecorderLimits {
  cardinalityLimit: number;
  maxStreams: number;
}

type RawValue = string | number | undefined;
/** What of a request the attribute values are read from: a reader sees nothing else of it. */
type ReadFacts = Pick<RequestFacts, 'method' | 'era' | 'protocolVersion' | 'clientName' | 'clientVersion' | 'client'>;
/** What of an outcome they are read from. */
type ReadOutcome = Pick<Outcome, 'outcome' | 'errorCode'>;
type ReadRequestValue = (facts: ReadFacts, server: ServerAdvertisement | undefined, outcome: ReadOutcome) => RawValue;

/**
 * Where the value of each request attribute comes from, keyed as the contract's {@link REQUEST_ATTRIBUTES}
 * table: the compiler checks that every attribute of the table is here and nothing else is.
 */
const REQUEST_VALUES: { readonly [K in RequestDimKey]: ReadRequestValue } = {
  serverName: (_facts, server) => server?.identity.name,
  serverVersion: (_facts, server) => server?.identity.version,
  method: (facts) => facts.method,
  era: (facts) => facts.era,
  protocolVersion: (facts) => facts.protocolVersion,
  clientName: (facts) => facts.clientName,
  clientVersion: (facts) => facts.clientVersion,
  clientDeclaration: (facts) => facts.client.declaration,
  // `unknown` when the request was answered before any server instance existed.
  serverDeclaration: (_facts, server) => (server === undefined ? DECLARATION.unknown : server.extensions.declaration),
  outcome: (_facts, _server, outcome) => outcome.outcome,
  statusCode: (_facts, _server, outcome) => outcome.errorCode,
};

/** The same, as arrays in the table's order (the order of the recorder's per-request slots). */
const REQUEST_NAMES: readonly string[] = REQUEST_ATTRIBUTES.map((attribute) => attribute.name);
const REQUEST_READERS: readonly ReadRequestValue[] = REQUEST_ATTRIBUTES.map((attribute) => REQUEST_VALUES[attribute.key]);

/** One point of `extscope.extension.requests`, keyed as the contract's {@link EXTENSION_ATTRIBUTES} table. */
type ExtensionValues = { [K in ExtensionDimKey]: K extends 'extensionId' ? string : boolean };

/** The attributes of a table's entries, in table order, from values keyed as the table; absent ones are left out. */
function attributesOf<T extends readonly AttributeSpec[]>(table: T, values: { [K in T[number]['key']]?: string | boolean | undefined }): Attributes {
  const attributes: Attributes = {};
  for (const attribute of table) {
    const value = values[attribute.key as T[number]['key']];
    if (value !== undefined) attributes[attribute.name] = value;
  }
  return attributes;
}

function requestAttributes(values: readonly (string | undefined)[]): Attributes {
  const attributes: Attributes = {};
  for (let i = 0; i < REQUEST_NAMES.length; i++) {
    const value = values[i];
    if (value !== undefined) attributes[REQUEST_NAMES[i]!] = value;
  }
  return attributes;
}

const SEP = '\u0001';
const ABSENT = '\u0002';
const MAX_ADVERTISED_VARIANTS = 256;
const NO_IDS: readonly string[] = [];
const FLAG_SUFFIX = Array.from({ length: 16 }, (_, flags) => `${SEP}${flags.toString(16)}`);
/** Values of `extscope.agent.reason` on `extscope.agent.extension_ids.rejected`. */

interface AdvertisedVariant {
  /** Attributes of `extscope.server.extensions`. */
  server: Attributes;
  /** Attributes of each `extscope.server.extension.advertised` point. */
  points: Attributes[];
}

/** The last request's inputs (all a reader may read, and the objects its extension points come from), and what it counted into. */
interface LastRequest extends Omit<ReadFacts, 'client'>, ReadOutcome {
  client: DeclaredExtensions | undefined;
  server: ServerAdvertisement | undefined;
  required: DeclaredExtensions | undefined;
  /** Empty until a request was counted. */
  streams: Stream[];
  /** The attributes whose overflow its extension points counted. */
  overflows: string[];
}

/**
 * Turns finished requests into metric points: the per-request and per-extension sums, the advertised-extension
 * gauges, and the agent's own health counts, with the attributes the contract's tables list, in their order.
 * Every attribute whose table entry is sender-controlled (`sender: true`) passes a {@link ValueGuard}.
 */
export class Recorder {
  private readonly requests: CounterStreams;
  private readonly extensionRequests: CounterStreams;
  private readonly rejectedIds = new CounterStreams();
  private readonly overflow = new CounterStreams();
  private readonly errors = new CounterStreams();
  private readonly advertised = new Map<string, AdvertisedVariant>();
  /** One guard per sender-controlled attribute, by attribute name. */
  private readonly guards = new Map<string, ValueGuard>();
  /** The guards of the request attributes, index-aligned with the table (`undefined`: not sender-controlled). */
  private readonly requestGuards: readonly (ValueGuard | undefined)[];
  // The last request's raw attribute inputs, and what they became: steady traffic repeats them, and a repeat
  // reuses the key string (whose hash V8 has cached) without re-admitting or re-joining anything.
  private readonly raw: RawValue[] = new Array(REQUEST_NAMES.length).fill(undefined);
  private readonly lastRaw: RawValue[] = new Array(REQUEST_NAMES.length).fill(ABSENT);
  private readonly values: (string | undefined)[] = new Array(REQUEST_NAMES.length).fill(undefined);
  private key = '';
  private folded: string[] = [];
  // Inner keys per extension id and flag combination, built once (cached strings hash once).
  private readonly innerKeys = new Map<string, string[]>();
  /**
   * What the last request counted into: when the next one repeats it (the same attribute inputs, the same
   * declaration and server objects: see `DeclarationMemo`), it is only counted in {@link repeats}, which
   * {@link addRepeats} adds to these streams (with the overflows the first one counted) before anything else is
   * counted or collected. Steady traffic takes this path nearly always: a request then touches one number.
   */
  private readonly last: LastRequest = {
    method: '',
    era: ERA.legacy,
    protocolVersion: undefined,
    clientName: undefined,
    clientVersion: undefined,
    client: undefined,
    server: undefined,
    outcome: '',
    errorCode: undefined,
    required: undefined,
    streams: [],
    overflows: [],
  };
  /** The last advertisement the gauges report (advertisements are never modified once read). */
  private lastAdvertised: ServerAdvertisement | undefined;
  /** The process is ending: the export under way is its last, and says so (`extscope.process.ended`). */
  private ending = false;
  /** Repeats of {@link last} not yet added to its streams. */
  private repeats = 0;
  /** While set, {@link countOverflow} also notes each overflow here (for {@link last}). */
  private noting: string[] | undefined;

  constructor(limits: RecorderLimits) {
    this.requests = new CounterStreams(limits.maxStreams);
    this.extensionRequests = new CounterStreams(limits.maxStreams);
    const onOverflow = (attribute: string): void => this.countOverflow(attribute);
    for (const attribute of [...REQUEST_ATTRIBUTES, ...EXTENSION_ATTRIBUTES] as readonly AttributeSpec[]) {
      if (attribute.sender === true) this.guards.set(attribute.name, new ValueGuard(attribute.name, limits.cardinalityLimit, onOverflow));
    }
    this.requestGuards = REQUEST_NAMES.map((name) => this.guards.get(name));
  }

  /**
   * What each instrument reports, in one list: {@link bind} makes the observable instruments of it, and
   * {@link snapshot} reads it synchronously (the final export at process exit, where no collection can run).
   */
  private readonly observers: readonly (readonly [MetricSpec, (result: ObservableResult) => void])[] = [
    [METRICS.requests, (result) => this.observeSum(this.requests, result)],
    [METRICS.extensionRequests, (result) => this.observeSum(this.extensionRequests, result)],
    [METRICS.agentIdsRejected, (result) => this.observeSum(this.rejectedIds, result)],
    [METRICS.agentOverflow, (result) => this.observeSum(this.overflow, result)],
    [METRICS.agentErrors, (result) => this.observeSum(this.errors, result)],
    [
      METRICS.advertised,
      (result) => {
        for (const variant of this.advertised.values()) for (const point of variant.points) result.observe(1, point);
      },
    ],
    [
      METRICS.advertisedCount,
      (result) => {
        for (const variant of this.advertised.values()) result.observe(variant.points.length, variant.server);
      },
    ],
    [
      METRICS.processEnded,
      (result) => {
        if (this.ending) result.observe(1);
      },
    ],
  ];

  /** From now on every collection says the process ended (called on the way out, before the last export). */
  markEnding(): void {
    this.ending = true;
  }

  /** (Re)creates the observable instruments on a meter; counts live here, so nothing is lost on a swap. */
  bind(meter: Meter): void {
    for (const [metric, observe] of this.observers) {
      const options = { description: metric.brief, unit: metric.unit };
      const instrument =
        metric.instrument === 'counter' ? meter.createObservableCounter(metric.name, options) : meter.createObservableGauge(metric.name, options);
      instrument.addCallback(observe);
    }
  }

  /** Every instrument's points as a collection would observe them now, read synchronously. */
  snapshot(): MetricSnapshot[] {
    return this.observers.map(([metric, observe]) => {
      const points: MetricSnapshot['points'] = [];
      observe({ observe: (value, attributes = {}) => points.push({ value, attributes }) });
      return { metric, points };
    });
  }

  private observeSum(streams: CounterStreams, result: ObservableResult): void {
    this.addRepeats();
    streams.observe(result);
  }

  countError(stage: string): void {
    this.errors.add(stage, '', { [ATTR_AGENT_STAGE]: stage });
  }

  /** Remembers what a connecting server advertises, for the gauges. */
  advertise(server: ServerAdvertisement): void {
    // A fresh server per request usually brings the last one's advertisement object (see ServerAdvertisements).
    if (server === this.lastAdvertised) return;
    const { name, version } = server.identity;
    const serverValues = { serverName: this.admit(ATTR_SERVER_NAME, name), serverVersion: this.admit(ATTR_SERVER_VERSION, version) };
    const ids = server.extensions.ids.map((id, index) => ({ extensionId: this.admit(ATTR_EXTENSION_ID, id), fingerprint: server.fingerprints[index] ?? '' }));
    const key = [name ?? ABSENT, version ?? ABSENT, ...ids.map(({ extensionId, fingerprint }) => `${extensionId}=${fingerprint}`)].join(SEP);
    if (!this.advertised.has(key)) {
      if (this.advertised.size >= MAX_ADVERTISED_VARIANTS) {
        this.countOverflow(METRICS.advertised.name);
        return;
      }
      this.advertised.set(key, {
        server: attributesOf(METRICS.advertisedCount.attributes, serverValues),
        points: ids.map((id) => attributesOf(METRICS.advertised.attributes, { ...serverValues, ...id })),
      });
    }
    this.lastAdvertised = server;
  }

  /** Counts one finished request: `server` is `undefined` when it was answered before any server instance. */
  record(facts: RequestFacts, server: ServerAdvertisement | undefined, outcome: Outcome): void {
    const last = this.last;
    if (this.repeatsLastRequest(facts, server, outcome)) {
      this.repeats++;
      return;
    }
    this.addRepeats();
    const raw = this.raw;
    for (let i = 0; i < REQUEST_READERS.length; i++) raw[i] = REQUEST_READERS[i]!(facts, server, outcome);
    if (this.repeatsLast()) {
      for (const attribute of this.folded) this.countOverflow(attribute);
    } else {
      this.admitRequest();
    }
    const key = this.key;
    const streams: Stream[] = [];
    streams.push(this.requests.get(key, '') ?? this.requests.create(key, '', requestAttributes(this.values), 0));
    const overflows: string[] = [];
    this.noting = overflows;
    try {
      this.recordExtensions(key, facts.client, server, outcome.required, streams);
    } finally {
      this.noting = undefined;
    }
    for (const stream of streams) stream.value++;
    this.countRejected(facts.client, 1);
    last.method = facts.method;
    last.era = facts.era;
    last.protocolVersion = facts.protocolVersion;
    last.clientName = facts.clientName;
    last.clientVersion = facts.clientVersion;
    last.client = facts.client;
    last.server = server;
    last.outcome = outcome.outcome;
    last.errorCode = outcome.errorCode;
    last.required = outcome.required;
    last.streams = streams;
    last.overflows = overflows;
  }

  /**
   * Adds the repeats of the last request counted since the last call to every stream it counted into, and counts
   * again, as often, the overflows and rejected ids it counted. Called before a different request is counted and
   * before every collection, so every export holds every request.
   */
  private addRepeats(): void {
    const times = this.repeats;
    if (times === 0) return;
    this.repeats = 0;
    const last = this.last;
    for (const attribute of this.folded) this.countOverflow(attribute, times);
    for (const stream of last.streams) stream.value += times;
    for (const attribute of last.overflows) this.countOverflow(attribute, times);
    if (last.client !== undefined) this.countRejected(last.client, times);
  }

  /**
   * Whether a request has every input of the last counted one: each field a reader may read ({@link ReadFacts},
   * {@link ReadOutcome}), compared one by one, and the same declaration and server objects (never modified once read).
   */
  private repeatsLastRequest(facts: RequestFacts, server: ServerAdvertisement | undefined, outcome: Outcome): boolean {
    const last = this.last;
    return (
      last.streams.length > 0 &&
      facts.client === last.client &&
      server === last.server &&
      outcome.required === last.required &&
      facts.method === last.method &&
      facts.era === last.era &&
      facts.protocolVersion === last.protocolVersion &&
      facts.clientName === last.clientName &&
      facts.clientVersion === last.clientVersion &&
      outcome.outcome === last.outcome &&
      outcome.errorCode === last.errorCode
    );
  }

  private countOverflow(attribute: string, times = 1): void {
    this.noting?.push(attribute);
    this.overflow.add(attribute, '', { [ATTR_AGENT_ATTRIBUTE]: attribute }, times);
  }

  /** A value as it may be exported: through the attribute's guard when a sender controls it. */
  private admit(attribute: string, value: string | undefined): string | undefined {
    if (value === undefined) return undefined;
    const guard = this.guards.get(attribute);
    return guard === undefined ? value : guard.admit(value);
  }

  private repeatsLast(): boolean {
    const { raw, lastRaw } = this;
    for (let i = 0; i < raw.length; i++) if (raw[i] !== lastRaw[i]) return false;
    return true;
  }

  /** Runs the raw inputs through the guards into `values` and the joined `key`. */
  private admitRequest(): void {
    const { raw, values, requestGuards } = this;
    this.folded = [];
    for (let i = 0; i < raw.length; i++) {
      const input = raw[i];
      const guard = requestGuards[i];
      const value = input === undefined ? undefined : guard === undefined ? String(input) : guard.admit(String(input));
      values[i] = value;
      if (value === OVERFLOW_VALUE && input !== OVERFLOW_VALUE) this.folded.push(REQUEST_NAMES[i]!);
      this.lastRaw[i] = input;
    }
    // Joined by a control character; ABSENT stands for a missing attribute.
    this.key = values.map((value) => value ?? ABSENT).join(SEP);
  }

  /** The streams of one point per id in the union of client, server and required ids (id lists are short: `includes`). */
  private recordExtensions(
    key: string,
    client: DeclaredExtensions,
    server: ServerAdvertisement | undefined,
    required: DeclaredExtensions | undefined,
    streams: Stream[],
  ): void {
    const requiredIds = required?.ids ?? NO_IDS;
    const serverIds = server?.extensions.ids ?? NO_IDS;
    for (const id of client.ids) streams.push(this.point(key, id, true, server?.ids.has(id) ?? false, requiredIds.includes(id)));
    for (const id of serverIds) {
      if (!client.ids.includes(id)) streams.push(this.point(key, id, false, true, requiredIds.includes(id)));
    }
    for (const id of requiredIds) {
      if (!client.ids.includes(id) && !serverIds.includes(id)) streams.push(this.point(key, id, false, false, true));
    }
    const serverInvalid = (server?.extensions.invalid ?? 0) > 0;
    if (client.invalid > 0 || serverInvalid) streams.push(this.point(key, INVALID_EXTENSION_ID, client.invalid > 0, serverInvalid, false));
  }

  /** The stream of one `extscope.extension.requests` point (created at 0 when new). */
  private point(key: string, id: string, clientDeclared: boolean, serverDeclared: boolean, required: boolean): Stream {
    const extensionId = id === INVALID_EXTENSION_ID ? id : this.admit(ATTR_EXTENSION_ID, id)!;
    const negotiated = isNegotiated(extensionId, clientDeclared, serverDeclared);
    const flags = (clientDeclared ? 8 : 0) | (serverDeclared ? 4 : 0) | (negotiated ? 2 : 0) | (required ? 1 : 0);
    let inners = this.innerKeys.get(extensionId);
    if (inners === undefined) {
      inners = FLAG_SUFFIX.map((suffix) => extensionId + suffix);
      this.innerKeys.set(extensionId, inners);
    }
    const inner = inners[flags]!;
    const stream = this.extensionRequests.get(key, inner);
    if (stream !== undefined) return stream;
    const values: ExtensionValues = { extensionId, clientDeclared, serverDeclared, negotiated, required };
    return this.extensionRequests.create(key, inner, { ...requestAttributes(this.values), ...attributesOf(EXTENSION_ATTRIBUTES, values) }, 0);
  }

  /** Counts the ids `client` rejected, `times` over. */
  private countRejected(client: DeclaredExtensions, times: number): void {
    if (client.invalid > 0) this.rejectedIds.add(REJECTED_ID_REASON.invalid, '', { [ATTR_AGENT_REASON]: REJECTED_ID_REASON.invalid }, client.invalid * times);
    if (client.dropped > 0) this.rejectedIds.add(REJECTED_ID_REASON.tooMany, '', { [ATTR_AGENT_REASON]: REJECTED_ID_REASON.tooMany }, client.dropped * times);
  }
}
