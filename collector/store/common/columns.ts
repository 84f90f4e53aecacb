import { EXTENSION_ATTRIBUTES, REQUEST_ATTRIBUTES, RESOURCE_ATTRIBUTES } from '../../../contract/index.js';
import type { InstanceIdentity, SeriesDims } from '../../model/batches.js';
import { buildKey } from '../../model/build.js';

/** A stored dimension: the field it is kept in (the contract's `key`), its column, and whether it is a flag. */
export interface DimColumn {
  key: Exclude<keyof SeriesDims, 'kind'>;
  column: string;
  flag: boolean;
}

/** Every attribute of the contract a series keeps, in the contract's table order (requests, then extensions). */
export const SERIES_COLUMNS: readonly DimColumn[] = [...REQUEST_ATTRIBUTES, ...EXTENSION_ATTRIBUTES].map((attribute) => ({
  key: attribute.key,
  column: attribute.column,
  flag: attribute.type === 'boolean',
}));

const byKey = (keys: readonly DimColumn['key'][]): readonly DimColumn[] =>
  keys.map((key) => {
    const found = SERIES_COLUMNS.find((column) => column.key === key);
    if (found === undefined) throw new Error(`no contract attribute is kept in ${key}`);
    return found;
  });

/**
 * The matrix projection (cells): what the matrix groups and filters by. Request cells keep the client and its
 * declaration state, extension cells the client, the id and its three flags.
 */
export const REQUEST_CELL_COLUMNS = byKey(['clientName', 'clientVersion', 'clientDeclaration']);
export const EXTENSION_CELL_COLUMNS = byKey(['clientName', 'clientVersion', 'extensionId', 'clientDeclared', 'serverDeclared', 'negotiated']);
/** The columns of the `cells` table, each once. */
export const CELL_COLUMNS: readonly DimColumn[] = [...new Set([...REQUEST_CELL_COLUMNS, ...EXTENSION_CELL_COLUMNS])];

/** A cell of one instance, as read from its series: the cell's columns, the server's declaration and the `-32021` flag. */
export const INSTANCE_CELL_COLUMNS: readonly DimColumn[] = [...CELL_COLUMNS, ...byKey(['serverDeclaration', 'required'])];

/**
 * An instance cell: one instance's series without their client (name, version), method, outcome or server identity.
 * Request instance cells keep the client's and the server's declaration state, extension instance cells the id,
 * its flags and the server's declaration state.
 */
export const REQUEST_INSTANCE_CELL_COLUMNS = byKey(['clientDeclaration', 'serverDeclaration']);
export const EXTENSION_INSTANCE_CELL_COLUMNS = byKey(['extensionId', 'clientDeclared', 'serverDeclared', 'negotiated', 'serverDeclaration', 'required']);
/** The columns of the `instance_cells` table (besides its instance and kind), each once. */
export const INSTANCE_CELL_TABLE_COLUMNS: readonly DimColumn[] = [...new Set([...REQUEST_INSTANCE_CELL_COLUMNS, ...EXTENSION_INSTANCE_CELL_COLUMNS])];

/** The resource attributes an instance row keeps. */
export const INSTANCE_COLUMNS: readonly { key: keyof InstanceIdentity; column: string }[] = RESOURCE_ATTRIBUTES.map((attribute) => ({
  key: attribute.key,
  column: attribute.column,
}));

/** The columns an instance's upsert writes: the resource's ({@link INSTANCE_COLUMNS}), then its build's key. */
export const INSTANCE_UPSERT_COLUMNS: readonly string[] = [...INSTANCE_COLUMNS.map((column) => column.column), 'build_key'];

/** The values of {@link INSTANCE_UPSERT_COLUMNS} for the resource an instance is stored as. */
export function instanceValues(resource: InstanceIdentity): (string | null)[] {
  return [...INSTANCE_COLUMNS.map((column) => resource[column.key]), buildKey(resource)];
}

/** Booleans as SQLite stores them. */
function flag(value: boolean | null): number | null {
  return value === null ? null : value ? 1 : 0;
}

/** A dimension's value as bound to a statement. */
export function bound(column: DimColumn, dims: Readonly<SeriesDims>): string | number | null {
  const value = dims[column.key];
  return column.flag ? flag(value as boolean | null) : (value as string | null);
}

/** A stored value read back (flags 0/1 → booleans). */
export function unbound(column: DimColumn, value: unknown): string | boolean | null {
  if (value === null || value === undefined) return null;
  return column.flag ? value === 1 : (value as string);
}

/** Sums stay exact integers up to this, and saturate there: a sum can never overflow (nor fail a read or a fold). */
export const MAX_STORED_COUNT = Number.MAX_SAFE_INTEGER;

/** The stored columns of a series (`series.kind` and {@link SERIES_COLUMNS}), as selected by {@link seriesDimsSql}. */
export const seriesDimsSql = (alias: string): string =>
  [`${alias}.kind AS kind`, ...SERIES_COLUMNS.map((column) => `${alias}.${column.column} AS ${column.column}`)].join(', ');

/** A series' dimensions read back from the columns {@link seriesDimsSql} selects (flags as booleans). */
export function storedDims(row: Record<string, unknown>): SeriesDims {
  const dims: Record<string, unknown> = { kind: Number(row['kind']) };
  for (const column of SERIES_COLUMNS)
    dims[column.key] = unbound(column, column.flag && row[column.column] != null ? Number(row[column.column]) : row[column.column]);
  return dims as SeriesDims;
}

/** An instance cell's stored columns ({@link INSTANCE_CELL_TABLE_COLUMNS}, and `kind`) read back as the dimensions its key is made from. */
export function storedInstanceCellDims(row: Record<string, unknown>): SeriesDims {
  const dims: Record<string, unknown> = { kind: Number(row['kind']) };
  for (const column of INSTANCE_CELL_TABLE_COLUMNS)
    dims[column.key] = unbound(column, column.flag && row[column.column] != null ? Number(row[column.column]) : row[column.column]);
  return dims as SeriesDims;
}
