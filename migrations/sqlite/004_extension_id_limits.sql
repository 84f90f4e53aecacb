-- extscope collector schema, version 4.
--
-- The extension ids the distinct-id limit has admitted, per instance (service and instance id as sent, JSON) and
-- UTC hour. Kept in the database so that an export retried after a restart is decided as it was the first time:
-- an id that overflowed into `_OTHER` then still does, and its points are recognised as the retry they are
-- instead of being counted again under their own id. Rows older than the dedup window are dropped by retention
-- (points that old are refused anyway).
CREATE TABLE extension_id_limits (
  instance     TEXT    NOT NULL,
  hour         INTEGER NOT NULL,
  extension_id TEXT    NOT NULL,
  PRIMARY KEY (instance, hour, extension_id)
) WITHOUT ROWID;

CREATE INDEX extension_id_limits_by_hour ON extension_id_limits (hour);
