import { MAX_STORED_COUNT } from '../../common/columns.js';

/** An overflow-safe sum that is 0 when empty and comes back as int8 (a number), whatever the number of rows. */
export const safeSum = (expression: string): string => `LEAST(coalesce(sum(${expression}), 0), ${MAX_STORED_COUNT})::bigint`;
