-- extscope collector schema for PostgreSQL, version 9: builds and sessions, as migrations/sqlite/008_builds_and_sessions.sql.
-- An instance keeps the deployment attributes its sender set and how its server is reached (`transport`: `stdio` =
-- one client session per process), the key of its build (collector/model/build.ts), and when it said it ended.
ALTER TABLE instances ADD COLUMN transport text;
ALTER TABLE instances ADD COLUMN deployment_environment text;
ALTER TABLE instances ADD COLUMN k8s_namespace text;
ALTER TABLE instances ADD COLUMN k8s_deployment text;
ALTER TABLE instances ADD COLUMN build_key text;
ALTER TABLE instances ADD COLUMN ended_ms bigint;
-- The same text buildKey() writes: array_to_json() prints no spaces, as JSON.stringify does.
UPDATE instances SET build_key = array_to_json(ARRAY[service, server_name, server_version, host, NULL, NULL, NULL]::text[])::text;
CREATE INDEX instances_by_build ON instances (build_key);
