-- extscope collector schema for PostgreSQL, version 5 (as migrations/sqlite/005_alerts.sql).
--
-- Alert states and their history. One row per activation of an alert: an alert (a rule and one set of labels,
-- identified by its fingerprint) goes pending, maybe firing, then resolved; when its condition holds again later,
-- a new row starts. At most one row per fingerprint is not resolved. Labels and annotations are JSON objects
-- (as text, so that the API orders them as the SQLite store does); `service` is the `service` label.
CREATE TABLE alerts (
  fingerprint     text   NOT NULL,
  active_since_ms bigint NOT NULL,
  rule            text   NOT NULL,
  kind            text   NOT NULL,
  severity        text   NOT NULL,
  state           text   NOT NULL CHECK (state IN ('pending', 'firing', 'resolved')),
  service         text,
  labels          text   NOT NULL,
  annotations     text   NOT NULL,
  firing_since_ms bigint,
  resolved_at_ms  bigint,
  dashboard_path  text   NOT NULL,
  PRIMARY KEY (fingerprint, active_since_ms)
);

CREATE UNIQUE INDEX alerts_one_active ON alerts (fingerprint) WHERE state <> 'resolved';
CREATE INDEX alerts_by_state ON alerts (state, active_since_ms);
CREATE INDEX alerts_by_rule ON alerts (rule, active_since_ms);
CREATE INDEX alerts_by_service ON alerts (service, active_since_ms);
CREATE INDEX alerts_resolved ON alerts (resolved_at_ms) WHERE resolved_at_ms IS NOT NULL;

-- Every state change, once (the id is unique per transition, so a retry of the same evaluation adds nothing).
CREATE TABLE alert_transitions (
  id              text   PRIMARY KEY,
  fingerprint     text   NOT NULL,
  active_since_ms bigint NOT NULL,
  from_state      text   NOT NULL,
  to_state        text   NOT NULL,
  at_ms           bigint NOT NULL
);

CREATE INDEX alert_transitions_by_alert ON alert_transitions (fingerprint, active_since_ms, at_ms);
