-- extscope collector schema for PostgreSQL, version 14: ended sessions, folded, as
-- migrations/sqlite/011_ended_sessions.sql (collector/store/common/session-fold.ts). Replicas upgrade together: an
-- older replica would create a new instance for a late export of a folded session instead of counting it in its
-- build's "ended sessions" row.
ALTER TABLE instances ADD COLUMN ended_sessions bigint;

CREATE TABLE folded_instances (
  key_hash   bytea  PRIMARY KEY,
  target_ref bigint NOT NULL REFERENCES instances (id),
  clock_ms   bigint,
  folded_ms  bigint NOT NULL
);
CREATE INDEX folded_instances_by_target ON folded_instances (target_ref);
