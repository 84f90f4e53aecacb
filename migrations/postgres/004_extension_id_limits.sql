-- extscope collector schema for PostgreSQL, version 4 (as migrations/sqlite/004_extension_id_limits.sql).
--
-- The extension ids the distinct-id limit has admitted, per instance (service and instance id as sent, JSON) and
-- UTC hour, so that a retried export is decided as the first attempt was, on whichever replica it lands. New ids
-- are admitted under a transaction-scoped advisory lock per (instance, hour), so that two replicas cannot both
-- take the last places (collector/store/postgres/extension-id-limits.ts). Rows older than the dedup window are
-- dropped by retention.
CREATE TABLE extension_id_limits (
  instance     text   NOT NULL,
  hour         bigint NOT NULL,
  extension_id text   NOT NULL,
  PRIMARY KEY (instance, hour, extension_id)
);

CREATE INDEX extension_id_limits_by_hour ON extension_id_limits (hour);

-- The matrix reads also sum the series answered before any server instance existed (the cells do not keep the
-- server's declaration); there are few among very many, found by this index.
CREATE INDEX series_server_unknown ON series (id) WHERE server_declaration = 'unknown';
