import { MS_PER_MINUTE } from '../../model/time.js';

/** The reads over rollups: a range, narrowed by service (and instance, client, extension). */
export interface FilterQuery {
  fromMs: number;
  toMs: number;
  service?: string | undefined;
}

export interface CellQuery extends FilterQuery {
  /** One instance's series instead of the cells (no daily level). */
  instance?: string | undefined;
}

export interface InstanceCellQuery extends CellQuery {
  /** Only this client name's cells (exact). */
  clientName?: string | undefined;
}

export interface StepQuery extends FilterQuery {
  extensionId: string;
  stepMinutes: number;
  clientName?: string | undefined;
}

/** The named parameters of both backends' step queries over a rollup level of `minutes`-long buckets. */
export function stepParameters(query: StepQuery, minutes: number): Record<string, string | number | null> {
  const m0 = Math.floor(query.fromMs / MS_PER_MINUTE);
  const m1 = Math.ceil(query.toMs / MS_PER_MINUTE);
  return {
    m0,
    step: query.stepMinutes,
    b0: Math.floor(m0 / minutes),
    b1: Math.ceil(m1 / minutes),
    extension: query.extensionId,
    service: query.service ?? null,
    client: query.clientName ?? null,
  };
}
