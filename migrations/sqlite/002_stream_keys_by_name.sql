-- extscope collector schema, version 2.
--
-- Stream keys by attribute name: version 1 hashed the contract's attributes by position, so that adding one
-- changed every stream's key (and a cumulative sender would have been counted again from zero). Existing
-- streams keep their version-1 key until they next report: the collector then finds them by that key and
-- re-keys them (`key_version` 1 → 2) in the same transaction. Their history, dedup keys and cumulative state
-- stay attached to the stream's id.
ALTER TABLE streams ADD COLUMN key_version INTEGER NOT NULL DEFAULT 1;
CREATE INDEX streams_keyed_by_position ON streams (id) WHERE key_version = 1;

-- The distinct-extension-ids limit is kept in the collector's memory now.
DROP TABLE instance_extension_hours;
