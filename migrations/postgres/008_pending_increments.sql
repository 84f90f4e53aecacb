-- extscope collector schema for PostgreSQL, version 8.
--
-- Increments acknowledged but not yet added to the rollups. Each export appends its own rows here, in its own
-- transaction, and touches no row any other export touches; a fold (collector/store/postgres/fold.ts) moves them
-- into the rollups in batches, one replica at a time, before every read and every second. The SQLite store does
-- the same from its point_log.
CREATE TABLE pending_increments (
  minute      bigint NOT NULL,
  series_id   bigint NOT NULL,
  cell_id     bigint NOT NULL,
  all_cell_id bigint NOT NULL,
  value       bigint NOT NULL
);
