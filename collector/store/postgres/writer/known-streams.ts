import { identityHash, streamKey } from '../../common/identity.js';
import type { StreamRef } from '../../common/ingest-plan.js';

/**
 * A stream key as this collector has seen it: its hash (a function of the key alone, computed once rather than at
 * every export of the stream), and the stream the database last named for it. Nothing of `stored` is taken without
 * the database: every export loads its streams' ids again (another replica's retention may have dropped them), and
 * only a series' cells and dimensions are reused, when the load names the same series (they never change: the
 * series' key is made from them), so that the load reads and sends them only for a series this collector has not
 * seen.
 */
export interface KnownStream {
  hash: Buffer;
  hex: string;
  stored: StreamRef | undefined;
}

/**
 * {@link KnownStream}s by stream scope and attributes, without joining the two (the scope is shared by a metric's
 * points; joining would build a long new string per point). Bounded by clearing: an entry is only ever recomputed.
 */
export class KnownStreams {
  private byScope = new Map<string, Map<string, KnownStream>>();
  private size = 0;

  constructor(private readonly capacity: number) {}

  get(streamScope: string, streamAttributes: string): KnownStream {
    let byAttributes = this.byScope.get(streamScope);
    const found = byAttributes?.get(streamAttributes);
    if (found !== undefined) return found;
    if (this.size >= this.capacity) {
      this.byScope = new Map();
      this.size = 0;
      byAttributes = undefined;
    }
    if (byAttributes === undefined) this.byScope.set(streamScope, (byAttributes = new Map()));
    const hash = identityHash(streamKey(streamScope, streamAttributes));
    const entry: KnownStream = { hash, hex: hash.toString('hex'), stored: undefined };
    byAttributes.set(streamAttributes, entry);
    this.size++;
    return entry;
  }
}
