-- extscope collector schema for PostgreSQL, version 15: room on each page for the new versions of the rollup rows
-- the fold updates in place. Every fold adds to the hour and day rows of the series, cells and instance cells it
-- moves, and to the cells' and instance cells' minute rows, again and again while a bucket is open. On a full page
-- each new version goes to another page with a new entry in the primary key, and every later upsert of that key
-- walks past the dead versions until a vacuum (25 page reads per upsert for the day rows of cells in a benchmark's
-- fold). Pages half empty take a new version of every row they hold, on the same page and with no index entry (a
-- heap-only update), and the dead versions are pruned as the page fills again.
--
-- The series' minute rows stay packed: each is written about once (one export of a stream per minute). The setting
-- applies to pages written from now on. Replicas need not upgrade together (no statement changes).
ALTER TABLE series_hour SET (fillfactor = 50);
ALTER TABLE cell_minute SET (fillfactor = 50);
ALTER TABLE cell_hour SET (fillfactor = 50);
ALTER TABLE cell_day SET (fillfactor = 50);
ALTER TABLE instance_cell_minute SET (fillfactor = 50);
ALTER TABLE instance_cell_hour SET (fillfactor = 50);
ALTER TABLE instance_cell_day SET (fillfactor = 50);
