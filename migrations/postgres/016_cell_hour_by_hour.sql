-- extscope collector schema for PostgreSQL, version 16.
--
-- The cells' hours by hour: the open part of a long range (the hour under way, read at every request while the closed
-- part is kept) is then read from the hour out, its rows in one range, instead of one seek per cell into the primary
-- key (collector/store/postgres/readers/rollups.ts). A fold adds to a row's count, which leaves this index as it is
-- (the update may stay on its page); only a cell's first increment in an hour adds an entry, at the index's newest end.
CREATE INDEX cell_hour_by_hour ON cell_hour (hour, cell_id);
