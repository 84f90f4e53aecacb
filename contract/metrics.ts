import {
  ADVERTISED_ATTRIBUTES,
  ATTR_AGENT_ATTRIBUTE,
  ATTR_AGENT_REASON,
  ATTR_AGENT_STAGE,
  type AttributeSpec,
  EXTENSION_ATTRIBUTES,
  REQUEST_ATTRIBUTES,
} from './attributes.js';
import { REJECTED_ID_REASON } from './values.js';

export type Instrument = 'counter' | 'gauge';

export interface MetricSpec {
  readonly name: string;
  /** `counter`: a monotonic Sum (delta or cumulative); `gauge`: a Gauge. */
  readonly instrument: Instrument;
  readonly unit: string;
  readonly brief: string;
  readonly attributes: readonly (AttributeSpec | string)[];
  /** Stored by the collector (the agent's health metrics are for the sender's own backend). */
  readonly stored: boolean;
}

export const METRICS = {
  requests: {
    name: 'extscope.requests',
    instrument: 'counter',
    unit: '{request}',
    brief: 'one per answered or cancelled MCP request',
    attributes: REQUEST_ATTRIBUTES,
    stored: true,
  },
  extensionRequests: {
    name: 'extscope.extension.requests',
    instrument: 'counter',
    unit: '{request}',
    brief: 'one per request per extension id the client declared, the server advertised, or a `-32021` answer required',
    attributes: [...REQUEST_ATTRIBUTES, ...EXTENSION_ATTRIBUTES],
    stored: true,
  },
  advertised: {
    name: 'extscope.server.extension.advertised',
    instrument: 'gauge',
    unit: '{extension}',
    brief: 'value 1 per extension id and settings fingerprint a server advertises; reported every export, so idle instances report too',
    attributes: ADVERTISED_ATTRIBUTES,
    stored: true,
  },
  advertisedCount: {
    name: 'extscope.server.extensions',
    instrument: 'gauge',
    unit: '{extension}',
    brief: 'how many extensions a server advertises (0 included)',
    attributes: ADVERTISED_ATTRIBUTES.slice(0, 2),
    stored: true,
  },
  processEnded: {
    name: 'extscope.process.ended',
    instrument: 'gauge',
    unit: '{process}',
    brief:
      "value 1, only in the export a process sends as it ends (its last): the collector marks the instance ended at once instead of waiting for its silence; a stdio session leaves the live fleet with it. Its time, on the process's clock, orders it among the process's exports: one sent before it but arriving after it leaves the instance ended; newer points (a process started again under the same `service.instance.id`) run it again",
    attributes: [],
    stored: true,
  },
  agentIdsRejected: {
    name: 'extscope.agent.extension_ids.rejected',
    instrument: 'counter',
    unit: '{id}',
    brief: `extension ids not recorded, by reason (\`${REJECTED_ID_REASON.invalid}\`, \`${REJECTED_ID_REASON.tooMany}\`)`,
    attributes: [ATTR_AGENT_REASON],
    stored: false,
  },
  agentOverflow: {
    name: 'extscope.agent.cardinality.overflow',
    instrument: 'counter',
    unit: '{value}',
    brief: 'attribute values folded into `_OTHER` by the cardinality cap, by attribute',
    attributes: [ATTR_AGENT_ATTRIBUTE],
    stored: false,
  },
  agentErrors: {
    name: 'extscope.agent.errors',
    instrument: 'counter',
    unit: '{error}',
    brief: 'internal agent errors, caught and counted, by stage',
    attributes: [ATTR_AGENT_STAGE],
    stored: false,
  },
} as const satisfies Record<string, MetricSpec>;

export const METRIC_REQUESTS = METRICS.requests.name;
export const METRIC_EXTENSION_REQUESTS = METRICS.extensionRequests.name;
export const METRIC_SERVER_EXTENSION_ADVERTISED = METRICS.advertised.name;
export const METRIC_SERVER_EXTENSIONS = METRICS.advertisedCount.name;
export const METRIC_PROCESS_ENDED = METRICS.processEnded.name;
export const METRIC_AGENT_IDS_REJECTED = METRICS.agentIdsRejected.name;
export const METRIC_AGENT_OVERFLOW = METRICS.agentOverflow.name;
export const METRIC_AGENT_ERRORS = METRICS.agentErrors.name;
