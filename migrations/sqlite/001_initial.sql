-- extscope collector schema, version 1.
--
-- Times: *_ms are Unix milliseconds; minute/hour/day columns are whole units since the Unix epoch (UTC);
-- *_ns are the OTLP nanosecond timestamps, kept exactly because they identify points.
-- Identity keys (`key_hash`) are the first 16 bytes of SHA-256 over a canonical JSON of the identifying values.

-- One row per (service.name, service.instance.id).
CREATE TABLE instances (
  id              INTEGER PRIMARY KEY,
  key_hash        BLOB    NOT NULL UNIQUE,
  service         TEXT,
  instance_id     TEXT,
  service_version TEXT,
  host            TEXT,
  server_name     TEXT,
  server_version  TEXT,
  first_seen_ms   INTEGER NOT NULL,
  last_seen_ms    INTEGER NOT NULL,
  -- Newest collection time of an advertised-extensions gauge, and a counter bumped at each new one:
  -- rows of `advertised` stamped with the current generation are what the instance advertises now.
  advertised_ms   INTEGER,
  advertise_gen   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX instances_by_service ON instances (service, instance_id);

-- The matrix projection: a series without instance, method, outcome, era, protocol, server identity.
-- kind 0 = extscope.requests (by client declaration), kind 1 = extscope.extension.requests (by id and flags).
-- scope 0 = one service's cell; scope 1 = the same over all services (service NULL), which is what the
-- unfiltered matrix reads: as many rows as client versions × extensions, however many services there are.
CREATE TABLE cells (
  id                 INTEGER PRIMARY KEY,
  key_hash           BLOB    NOT NULL UNIQUE,
  scope              INTEGER NOT NULL,
  kind               INTEGER NOT NULL,
  service            TEXT,
  client_name        TEXT,
  client_version     TEXT,
  client_declaration TEXT,
  extension_id       TEXT,
  client_declared    INTEGER,
  server_declared    INTEGER,
  negotiated         INTEGER
);
CREATE INDEX cells_by_service ON cells (scope, service);
CREATE INDEX cells_by_extension ON cells (extension_id);

-- Every attribute of the contract, plus the instance: what the per-minute rollups are keyed by.
CREATE TABLE series (
  id                 INTEGER PRIMARY KEY,
  key_hash           BLOB    NOT NULL UNIQUE,
  instance_ref       INTEGER NOT NULL REFERENCES instances (id),
  cell_id            INTEGER NOT NULL REFERENCES cells (id),
  all_cell_id        INTEGER NOT NULL REFERENCES cells (id),
  kind               INTEGER NOT NULL,
  server_name        TEXT,
  server_version     TEXT,
  method             TEXT,
  era                TEXT,
  protocol_version   TEXT,
  client_name        TEXT,
  client_version     TEXT,
  client_declaration TEXT,
  server_declaration TEXT,
  outcome            TEXT,
  status_code        TEXT,
  extension_id       TEXT,
  client_declared    INTEGER,
  server_declared    INTEGER,
  negotiated         INTEGER,
  required           INTEGER
);
CREATE INDEX series_by_instance ON series (instance_ref);

-- An OTLP stream: resource + scope + metric + all point attributes. Several streams may feed one series
-- (e.g. attributes we do not keep); each has its own dedup keys and cumulative state.
CREATE TABLE streams (
  id          INTEGER PRIMARY KEY,
  key_hash    BLOB    NOT NULL UNIQUE,
  series_id   INTEGER NOT NULL REFERENCES series (id),
  temporality INTEGER NOT NULL
);
CREATE INDEX streams_by_series ON streams (series_id);

-- Every applied increment, in order: the identity of a point (stream, start, end) is unique, so a retried
-- export inserts nothing (INSERT OR IGNORE); rows after `meta.folded_seq` are not yet in the rollups. Rows
-- are kept for `retention.dedupHours` (by end time), and never before they are folded.
CREATE TABLE point_log (
  -- AUTOINCREMENT: a sequence number is never reused, even after retention emptied the table.
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  end_ns      INTEGER NOT NULL,
  stream_id   INTEGER NOT NULL,
  start_ns    INTEGER NOT NULL,
  minute      INTEGER NOT NULL,
  series_id   INTEGER NOT NULL,
  cell_id     INTEGER NOT NULL,
  all_cell_id INTEGER NOT NULL,
  value       INTEGER NOT NULL
);
CREATE UNIQUE INDEX point_log_identity ON point_log (end_ns, stream_id, start_ns);

-- Last value seen per cumulative stream and start time (one row per process incarnation of the sender).
CREATE TABLE cumulative_state (
  stream_id INTEGER NOT NULL,
  start_ns  INTEGER NOT NULL,
  end_ns    INTEGER NOT NULL,
  value     INTEGER NOT NULL,
  PRIMARY KEY (stream_id, start_ns)
) WITHOUT ROWID;

CREATE TABLE series_minute (
  series_id INTEGER NOT NULL,
  minute    INTEGER NOT NULL,
  count     INTEGER NOT NULL,
  PRIMARY KEY (series_id, minute)
) WITHOUT ROWID;

CREATE TABLE series_hour (
  series_id INTEGER NOT NULL,
  hour      INTEGER NOT NULL,
  count     INTEGER NOT NULL,
  PRIMARY KEY (series_id, hour)
) WITHOUT ROWID;

CREATE TABLE cell_minute (
  cell_id INTEGER NOT NULL,
  minute  INTEGER NOT NULL,
  count   INTEGER NOT NULL,
  PRIMARY KEY (cell_id, minute)
) WITHOUT ROWID;

CREATE TABLE cell_hour (
  cell_id INTEGER NOT NULL,
  hour    INTEGER NOT NULL,
  count   INTEGER NOT NULL,
  PRIMARY KEY (cell_id, hour)
) WITHOUT ROWID;

CREATE TABLE cell_day (
  cell_id INTEGER NOT NULL,
  day     INTEGER NOT NULL,
  count   INTEGER NOT NULL,
  PRIMARY KEY (cell_id, day)
) WITHOUT ROWID;

-- Distinct extension ids per instance and hour, for the cardinality limit.
CREATE TABLE instance_extension_hours (
  instance_ref INTEGER NOT NULL,
  hour         INTEGER NOT NULL,
  extension_id TEXT    NOT NULL,
  PRIMARY KEY (instance_ref, hour, extension_id)
) WITHOUT ROWID;

-- What each instance advertised, per server identity, id and settings fingerprint ('' = absent).
CREATE TABLE advertised (
  instance_ref   INTEGER NOT NULL,
  server_name    TEXT    NOT NULL,
  server_version TEXT    NOT NULL,
  extension_id   TEXT    NOT NULL,
  fingerprint    TEXT    NOT NULL,
  first_seen_ms  INTEGER NOT NULL,
  last_seen_ms   INTEGER NOT NULL,
  last_gen       INTEGER NOT NULL,
  PRIMARY KEY (instance_ref, server_name, server_version, extension_id, fingerprint)
) WITHOUT ROWID;

-- extscope.server.extensions: how many ids each server identity of an instance advertised (0 included).
CREATE TABLE advertised_counts (
  instance_ref   INTEGER NOT NULL,
  server_name    TEXT    NOT NULL,
  server_version TEXT    NOT NULL,
  count          INTEGER NOT NULL,
  first_seen_ms  INTEGER NOT NULL,
  last_seen_ms   INTEGER NOT NULL,
  last_gen       INTEGER NOT NULL,
  PRIMARY KEY (instance_ref, server_name, server_version)
) WITHOUT ROWID;

-- Recent example requests (from spans) per matrix cell; a sample for drill-down, never a count.
CREATE TABLE span_examples (
  id                 INTEGER PRIMARY KEY,
  cell_hash          BLOB    NOT NULL,
  service            TEXT,
  instance_id        TEXT,
  client_name        TEXT,
  client_version     TEXT,
  extension_id       TEXT,
  trace_id           TEXT    NOT NULL,
  span_id            TEXT    NOT NULL,
  name               TEXT    NOT NULL,
  method             TEXT,
  outcome            TEXT,
  status_code        TEXT,
  client_declaration TEXT,
  start_ms           INTEGER NOT NULL,
  duration_ms        REAL    NOT NULL,
  client_extensions  TEXT    NOT NULL,
  server_extensions  TEXT    NOT NULL,
  negotiated         TEXT    NOT NULL,
  required           TEXT    NOT NULL,
  UNIQUE (cell_hash, trace_id, span_id)
);
CREATE INDEX span_examples_by_cell ON span_examples (cell_hash, start_ms);
CREATE INDEX span_examples_by_time ON span_examples (start_ms);

-- Small key/value facts about this database: the fold watermark, the readiness probe's last write.
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value NOT NULL
);
INSERT INTO meta (key, value) VALUES ('folded_seq', 0);
