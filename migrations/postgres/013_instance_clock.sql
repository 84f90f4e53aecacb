-- extscope collector schema for PostgreSQL, version 13: the newest time an instance's exports carry, as
-- migrations/sqlite/010_instance_clock.sql. When an instance ended is decided by the sender's clock, not by the
-- order its exports arrive in (collector/store/common/ending-rule.ts). Replicas upgrade together: an older one would
-- still end and revive instances by arrival order, and leave this column as it found it.
ALTER TABLE instances ADD COLUMN clock_ms bigint;
