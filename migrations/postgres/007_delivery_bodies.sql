-- extscope collector schema for PostgreSQL, version 7 (as migrations/sqlite/007_delivery_bodies.sql).
--
-- The body of each notification not yet finished (queued, retrying, abandoned at a shutdown), so that a restarted
-- collector sends it again, the same bytes under the same idempotency key; cleared once it is delivered, failed
-- or dropped.
ALTER TABLE alert_deliveries ADD COLUMN body text;

CREATE INDEX alert_deliveries_unfinished ON alert_deliveries (receiver, state, created_at_ms, id);
