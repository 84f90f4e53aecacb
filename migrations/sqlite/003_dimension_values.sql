-- extscope collector schema, version 3.
--
-- The distinct values the collector keeps of each sender-controlled dimension (client names and versions, server
-- names and versions, methods, protocol versions, status codes): a value not listed here once its dimension holds
-- the limit is stored as the overflow value `_OTHER` instead. Kept in the database, so that the decision is the
-- same after a restart and on every replica sharing the database; filled from the series already stored.
CREATE TABLE dimension_values (
  dimension TEXT NOT NULL,
  value     TEXT NOT NULL,
  PRIMARY KEY (dimension, value)
) WITHOUT ROWID;

INSERT OR IGNORE INTO dimension_values (dimension, value)
  SELECT 'server_name', server_name FROM series WHERE server_name IS NOT NULL
  UNION SELECT 'server_version', server_version FROM series WHERE server_version IS NOT NULL
  UNION SELECT 'method', method FROM series WHERE method IS NOT NULL
  UNION SELECT 'protocol_version', protocol_version FROM series WHERE protocol_version IS NOT NULL
  UNION SELECT 'client_name', client_name FROM series WHERE client_name IS NOT NULL
  UNION SELECT 'client_version', client_version FROM series WHERE client_version IS NOT NULL
  UNION SELECT 'status_code', status_code FROM series WHERE status_code IS NOT NULL;
