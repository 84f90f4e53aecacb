/** The shapes of the collector's `/api/v1` answers this page reads (see the README, "Query API"). */

export type Declarations = { unknown: number; none: number; declared: number };

export interface ExtensionCounts {
  id: string;
  clientDeclared: number;
  serverAdvertised: number;
  negotiated: number;
  /** Matrix cells: of `clientDeclared`, the requests answered before any server instance existed. */
  serverUnknown?: number;
}

export interface MatrixRow {
  client: string;
  name: string | null;
  version: string | null;
  requests: number;
  /** Of `requests`, those answered before any server instance existed: left out of every share. */
  serverUnknown?: number;
  declaration: Declarations;
  extensions: ExtensionCounts[];
}

export interface MatrixResponse {
  from: string;
  to: string;
  resolution: string;
  group: string;
  extensions: string[];
  rows: MatrixRow[];
}

export interface InstanceView {
  service: string | null;
  instanceId: string | null;
  serviceVersion?: string | null;
  host?: string | null;
  serverName?: string | null;
  serverVersion?: string | null;
  firstSeen: string;
  lastSeen: string;
  stale: boolean;
  advertisedAt?: string | null;
  advertises: { id: string; fingerprints: string[] }[];
  servers: { name: string | null; version: string | null; count: number | null; extensions: { id: string; fingerprint: string | null }[] }[];
  settingsVariants: number;
  differs: boolean;
  history: { id: string; fingerprint: string | null; serverName?: string | null; serverVersion?: string | null; firstSeen: string; lastSeen: string; current: boolean }[];
}

export interface InstancesResponse {
  instances: InstanceView[];
}

export interface ClientsResponse {
  from: string;
  to: string;
  clients: { client: string; name: string | null; version: string | null; requests: number }[];
}

export interface TimeseriesResponse {
  extension: string;
  from: string;
  to: string;
  stepMinutes: number;
  points: { t: string; requests: number; clientDeclared: number; serverAdvertised: number; negotiated: number; negotiatedShare: number | null }[];
}

interface TrendFrame {
  from: string;
  to: string;
  stepMinutes: number;
  times: string[];
}

export interface DeclarationTrend extends TrendFrame {
  requests: number[];
  unknown: number[];
  none: number[];
  declared: number[];
}

export interface ClientTrend extends TrendFrame {
  group: string;
  clients: { client: string; name: string | null; version: string | null; total: number; requests: number[] }[];
  other: { clients: number; total: number; requests: number[] };
}

export interface ExtensionTrend extends TrendFrame {
  requests: number[];
  extensions: { id: string; clientDeclared: number[]; serverAdvertised: number[]; negotiated: number[]; negotiatedShare: (number | null)[] }[];
}

export interface RequiredTrend extends TrendFrame {
  total: number;
  errors: number[];
  extensions: { id: string; total: number; counts: number[]; clients: { client: string; name: string | null; version: string | null; count: number }[] }[];
}

export interface Example {
  service: string | null;
  instanceId: string | null;
  traceId: string;
  spanId: string;
  name: string;
  method: string | null;
  outcome: string | null;
  statusCode: string | null;
  clientName: string | null;
  clientVersion: string | null;
  clientDeclaration: string | null;
  start: string;
  durationMs: number;
  clientExtensions: string[];
  serverExtensions: string[];
  negotiated: string[];
  required: string[];
}

export interface ExamplesResponse {
  examples: Example[];
}
