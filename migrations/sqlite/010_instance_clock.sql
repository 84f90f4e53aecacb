-- extscope collector schema, version 10.
--
-- When an instance ended is decided by the sender's clock, not by the order its exports arrive in
-- (collector/store/common/ending-rule.ts): an instance keeps the newest time its exports' points carry (ms, the
-- sender's clock). A periodic export no newer than the process's last one leaves it ended; a process started again
-- under the same id sends newer points and runs again. NULL until its next dated export: a row written before this
-- version takes that export's time (and, ended, runs again with it, as any later export did before).
ALTER TABLE instances ADD COLUMN clock_ms INTEGER;
