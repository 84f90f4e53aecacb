import { MAX_STORED_COUNT } from '../common/columns.js';

/** An overflow-safe `sum()` (SQLite's raises "integer overflow"): `total()` never fails, capped and made whole again; 0 when empty. */
export const safeSum = (expression: string): string => `CAST(min(total(${expression}), ${MAX_STORED_COUNT}) AS INTEGER)`;
