-- extscope collector schema for PostgreSQL, version 17: room on each page for the new versions of the rows every
-- export updates in place, as version 15 left for the rollups. Each export moves its instance row (last seen, the
-- clock, the advertising generation) and the rows of what the instance advertises (last seen); on a full page each
-- new version went to another page with a new entry in every index of the table (four on `instances`, the key hashes
-- and names an export looks its instances up by among them): about 1 update in 6 was heap-only in a benchmark's
-- steady rounds. Pages half empty take the new version on the same page, with no index entry.
--
-- The setting applies to pages written from now on. Replicas need not upgrade together (no statement changes).
ALTER TABLE instances SET (fillfactor = 50);
ALTER TABLE advertised SET (fillfactor = 50);
ALTER TABLE advertised_counts SET (fillfactor = 50);
