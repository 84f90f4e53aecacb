-- extscope collector schema for PostgreSQL, version 3 (as migrations/sqlite/003_dimension_values.sql).
--
-- The distinct values kept of each sender-controlled dimension: once a dimension holds the limit, a value not
-- listed is stored as `_OTHER`. In the database, so that every replica decides the same (new values are added
-- under a transaction-scoped advisory lock, see collector/store/postgres/writer/dimension-limit.ts).
CREATE TABLE dimension_values (
  dimension text NOT NULL,
  value     text NOT NULL,
  PRIMARY KEY (dimension, value)
);

INSERT INTO dimension_values (dimension, value)
  SELECT 'server_name', server_name FROM series WHERE server_name IS NOT NULL
  UNION SELECT 'server_version', server_version FROM series WHERE server_version IS NOT NULL
  UNION SELECT 'method', method FROM series WHERE method IS NOT NULL
  UNION SELECT 'protocol_version', protocol_version FROM series WHERE protocol_version IS NOT NULL
  UNION SELECT 'client_name', client_name FROM series WHERE client_name IS NOT NULL
  UNION SELECT 'client_version', client_version FROM series WHERE client_version IS NOT NULL
  UNION SELECT 'status_code', status_code FROM series WHERE status_code IS NOT NULL
ON CONFLICT DO NOTHING;
