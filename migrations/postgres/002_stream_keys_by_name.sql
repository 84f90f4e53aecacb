-- extscope collector schema for PostgreSQL, version 2 (as migrations/sqlite/002_stream_keys_by_name.sql).
--
-- Stream keys by attribute name. Streams keyed by attribute position (`key_version` 1, only ever present here
-- when copied from an older SQLite database) are re-keyed when they next report, in that export's transaction.
ALTER TABLE streams ADD COLUMN key_version smallint NOT NULL DEFAULT 1;
CREATE INDEX streams_keyed_by_position ON streams (id) WHERE key_version = 1;

-- The distinct-extension-ids limit is not kept in the database.
DROP TABLE instance_extension_hours;
