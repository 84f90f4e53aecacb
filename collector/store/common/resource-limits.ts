import { OVERFLOW_VALUE } from '../../../contract/index.js';
import type { InstanceIdentity } from '../../model/batches.js';
import { instanceKey } from './identity.js';

/** The caps on the two dimensions a sender controls through its resource; both stores apply them by {@link limitResource}. */
export interface ResourceLimits {
  /** Distinct service names kept; a new one past it is stored as `_OTHER`. */
  maxServices: number;
  /** Instances (service, instance id) kept; a new one past it is stored as the service's instance `_OTHER`. */
  maxInstances: number;
}

/** Distinct values kept per sender-controlled dimension, service names included, unless configured. */
export const DEFAULT_MAX_VALUES_PER_DIMENSION = 2000;
/** Instances kept unless configured. */
export const DEFAULT_MAX_INSTANCES = 20_000;

type Instance = Pick<InstanceIdentity, 'service' | 'instanceId'>;

/** The instances {@link limitResource} may ask about for a resource not stored yet: as sent, and with `_OTHER` for either part or both. */
export function resourceCandidates(resource: Instance): Instance[] {
  const { service, instanceId } = resource;
  return [
    { service, instanceId },
    { service: OVERFLOW_VALUE, instanceId },
    { service, instanceId: OVERFLOW_VALUE },
    { service: OVERFLOW_VALUE, instanceId: OVERFLOW_VALUE },
  ];
}

/** What the limit knows, as a dialect loaded it for one resource. */
export interface ResourceState {
  /** Which of the {@link resourceCandidates} are stored, by `instanceKey`. */
  knownInstances: ReadonlySet<string>;
  /** Whether the service as sent has an instance stored. */
  serviceKnown: boolean;
  /** Distinct services and instances stored. */
  services: number;
  instances: number;
}

/**
 * The limit on services and instances: a new service past `maxServices` is stored as `_OTHER`, a new instance past
 * `maxInstances` as its service's instance `_OTHER` (its streams stay its own: only their counts add up there).
 * Returns where the resource is stored and whether that adds a service or an instance row.
 */
export function limitResource(resource: Instance, state: ResourceState, limits: ResourceLimits): Instance & { newService: boolean; newInstance: boolean } {
  const known = (service: string | null, instanceId: string | null): boolean => state.knownInstances.has(instanceKey({ service, instanceId }));
  let { service, instanceId } = resource;
  if (known(service, instanceId)) return { service, instanceId, newService: false, newInstance: false };
  let newService = false;
  if (service !== null && service !== OVERFLOW_VALUE && !state.serviceKnown) {
    if (state.services < limits.maxServices) newService = true;
    else service = OVERFLOW_VALUE;
  }
  let newInstance = false;
  if (service === resource.service || !known(service, instanceId)) {
    if (state.instances >= limits.maxInstances) instanceId = OVERFLOW_VALUE;
    // The `_OTHER` row is one more when it is new (one per service at most).
    newInstance = instanceId !== OVERFLOW_VALUE || !known(service, instanceId);
  }
  return { service, instanceId, newService, newInstance };
}
