import type { ResourceIdentity } from '../../model/batches.js';

/**
 * Whether what a sender advertised is recorded, once the instance cap has decided where its counts go: an instance
 * stored under `_OTHER` stands for many instances, so what one of them advertises is not that row's, and recording
 * it would only look like drift between instances that do not exist. Both stores ask this, with the resource the
 * sender reported and the one the cap stored.
 */
export function recordsAdvertisements(sent: ResourceIdentity, stored: ResourceIdentity): boolean {
  return stored === sent;
}
