-- extscope collector schema, version 5.
--
-- Alert states and their history. One row per activation of an alert: an alert (a rule and one set of labels,
-- identified by its fingerprint) goes pending, maybe firing, then resolved; when its condition holds again later,
-- a new row starts. At most one row per fingerprint is not resolved. Labels and annotations are JSON objects;
-- `service` is the `service` label, kept apart so that the API can filter on it.
CREATE TABLE alerts (
  fingerprint     TEXT    NOT NULL,
  active_since_ms INTEGER NOT NULL,
  rule            TEXT    NOT NULL,
  kind            TEXT    NOT NULL,
  severity        TEXT    NOT NULL,
  state           TEXT    NOT NULL CHECK (state IN ('pending', 'firing', 'resolved')),
  service         TEXT,
  labels          TEXT    NOT NULL,
  annotations     TEXT    NOT NULL,
  firing_since_ms INTEGER,
  resolved_at_ms  INTEGER,
  dashboard_path  TEXT    NOT NULL,
  PRIMARY KEY (fingerprint, active_since_ms)
) WITHOUT ROWID;

CREATE UNIQUE INDEX alerts_one_active ON alerts (fingerprint) WHERE state <> 'resolved';
CREATE INDEX alerts_by_state ON alerts (state, active_since_ms);
CREATE INDEX alerts_by_rule ON alerts (rule, active_since_ms);
CREATE INDEX alerts_by_service ON alerts (service, active_since_ms);
CREATE INDEX alerts_resolved ON alerts (resolved_at_ms) WHERE resolved_at_ms IS NOT NULL;

-- Every state change, once (the id is unique per transition, so a retry of the same evaluation adds nothing).
CREATE TABLE alert_transitions (
  id              TEXT    PRIMARY KEY,
  fingerprint     TEXT    NOT NULL,
  active_since_ms INTEGER NOT NULL,
  from_state      TEXT    NOT NULL,
  to_state        TEXT    NOT NULL,
  at_ms           INTEGER NOT NULL
) WITHOUT ROWID;

CREATE INDEX alert_transitions_by_alert ON alert_transitions (fingerprint, active_since_ms, at_ms);
