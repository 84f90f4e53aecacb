import type { Context } from '../../lib/context.js';
import { matrixParams } from '../../lib/params.js';
import { type State, byInstance } from '../../lib/state.js';
import type { InstancesResponse } from '../../lib/types.js';

/**
 * Rows by instance are summed from every instance's series, a read several times longer than the client rows' on a
 * large fleet. Once the matrix is on screen, the page asks for them while it is idle, into the same cache the
 * grouping select reads (emptied at each refresh), so that regrouping renders at once; a change of range or filter
 * aborts the read (and the collector stops it). Rows by client, the way back, are loaded anyway for the client filter.
 */
export function prefetchByInstance(context: Context, state: State, instances: InstancesResponse): void {
  if (byInstance(state.group) || instances.instances.length < 2) return;
  const params = matrixParams({ ...state, group: 'instance' });
  const wanted = JSON.stringify(params);
  const idle = (work: () => void): void => void ('requestIdleCallback' in window ? window.requestIdleCallback(work, { timeout: 2000 }) : setTimeout(work, 200));
  idle(() => {
    if (context.isCurrent()) context.prefetch('matrix', params, (next) => JSON.stringify(matrixParams({ ...next, group: 'instance' })) === wanted);
  });
}
