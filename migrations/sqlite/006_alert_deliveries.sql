-- The delivery log of alert notifications: one row per receiver and transition (the idempotency key),
-- rewritten at each attempt, so the API shows where each notification stands.
CREATE TABLE alert_deliveries (
  id                 INTEGER PRIMARY KEY,
  receiver           TEXT    NOT NULL,
  transition_id      TEXT    NOT NULL,
  fingerprint        TEXT    NOT NULL,
  rule               TEXT    NOT NULL,
  from_state         TEXT    NOT NULL,
  to_state           TEXT    NOT NULL,
  state              TEXT    NOT NULL,
  attempts           INTEGER NOT NULL,
  last_status        INTEGER,
  last_error         TEXT,
  created_at_ms      INTEGER NOT NULL,
  updated_at_ms      INTEGER NOT NULL,
  next_attempt_at_ms INTEGER,
  delivered_at_ms    INTEGER,
  UNIQUE (receiver, transition_id)
);

CREATE INDEX alert_deliveries_by_update ON alert_deliveries (updated_at_ms, id);
CREATE INDEX alert_deliveries_by_fingerprint ON alert_deliveries (fingerprint, updated_at_ms);
