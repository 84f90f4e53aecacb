-- extscope collector schema, version 11.
--
-- Ended sessions, folded (collector/store/common/session-fold.ts). Retention folds a stdio session that ended more
-- than EXTSCOPE_ENDED_TTL_MINUTES ago into its build's "ended sessions" row, an instance whose `ended_sessions` says
-- how many sessions it holds (NULL on every other instance). The session's row goes; `folded_instances` keeps, by
-- its key, where it went and the newest time its exports carried (the sender's clock), so that a late export of it
-- within the dedup window is counted in that row, once, and not as a new instance.
ALTER TABLE instances ADD COLUMN ended_sessions INTEGER;

CREATE TABLE folded_instances (
  key_hash   BLOB    PRIMARY KEY,
  target_ref INTEGER NOT NULL REFERENCES instances (id),
  clock_ms   INTEGER,
  folded_ms  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX folded_instances_by_target ON folded_instances (target_ref);
