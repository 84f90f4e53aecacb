-- Builds and sessions. An instance keeps the deployment attributes its sender set and how its server is reached
-- (`transport`: `stdio` = one client session per process), the key of its build (collector/model/build.ts: the JSON
-- array of service, server name, server version, host and the deployment attributes), and when it said it ended
-- (its last export at exit; NULL while running, and for a process that was killed).
ALTER TABLE instances ADD COLUMN transport TEXT;
ALTER TABLE instances ADD COLUMN deployment_environment TEXT;
ALTER TABLE instances ADD COLUMN k8s_namespace TEXT;
ALTER TABLE instances ADD COLUMN k8s_deployment TEXT;
ALTER TABLE instances ADD COLUMN build_key TEXT;
ALTER TABLE instances ADD COLUMN ended_ms INTEGER;
-- The same text buildKey() writes: json_array() prints no spaces, as JSON.stringify does.
UPDATE instances SET build_key = json_array(service, server_name, server_version, host, NULL, NULL, NULL);
CREATE INDEX instances_by_build ON instances (build_key);
