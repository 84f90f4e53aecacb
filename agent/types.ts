import type { InstrumentationConfig } from '@opentelemetry/instrumentation';

export interface ExtscopeInstrumentationConfig extends InstrumentationConfig {
  /** Create a SERVER span per request (metrics are always recorded). Default `true`. */
  spans?: boolean;
  /** Most extension ids recorded per request and per side; the rest are counted as dropped. Default 64. */
  maxIdsPerRequest?: number;
  /** Longest extension id accepted; longer ids count as invalid. Default 128. */
  maxIdLength?: number;
  /** Distinct values per metric attribute before new ones fold into `_OTHER`. Default 1000. */
  cardinalityLimit?: number;
  /** Distinct attribute combinations per metric before new ones go to one overflow stream. Default 10000. */
  maxStreams?: number;
  /** Export raw client settings values on spans (they may be sensitive). Default `false`. */
  captureSettings?: boolean;
  /** Called once, the first time a server object connects (the zero-code entry starts its SDK here). */
  onFirstServer?: (server: ServerIdentity) => void;
}

export interface ServerIdentity {
  name?: string;
  version?: string;
}

export type ResolvedConfig = Required<
  Pick<ExtscopeInstrumentationConfig, 'spans' | 'maxIdsPerRequest' | 'maxIdLength' | 'cardinalityLimit' | 'maxStreams' | 'captureSettings'>
>;

export const DEFAULT_CONFIG: ResolvedConfig = {
  spans: true,
  maxIdsPerRequest: 64,
  maxIdLength: 128,
  cardinalityLimit: 1000,
  maxStreams: 10_000,
  captureSettings: false,
};
