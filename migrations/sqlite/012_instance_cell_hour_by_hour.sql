-- extscope collector schema, version 12.
--
-- The instance cells' hours by hour: the open part of a long range (the hour under way, whose totals change with every
-- fold) holds only the instances active in it, and is then read from the hour out instead of one seek per instance
-- cell (collector/store/sqlite/readers/rollups.ts). A fold adds to a row's count, which leaves this index as it is;
-- only an instance cell's first increment in an hour adds an entry, at the index's newest end.
CREATE INDEX instance_cell_hour_by_hour ON instance_cell_hour (hour, instance_cell_id);
