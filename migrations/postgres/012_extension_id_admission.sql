-- extscope collector schema for PostgreSQL, version 12.
--
-- The distinct-extension-id limit's admission in one statement: a collector that meets an (instance, hour) it does
-- not know yet (each instance's first export of every hour) calls this function once for the whole export, one
-- round trip, where it read the sets and then ran a transaction of its own with a lock, a read and an insert per
-- set. The decision is the same: per (instance, hour), in key order, the advisory lock every replica takes for that
-- set, then the set as committed (in a volatile function each statement sees what committed before it began, so
-- the read comes after the lock is held), then the given ids not in it, in their order, while the set holds fewer
-- than `max_ids`. Returns every set it was given, whole. `ids` are unique per set; the three arrays are one row each.
-- (Replicas upgrade together: an older one keeps its own read, lock and insert, under the same lock.)
CREATE FUNCTION extscope_admit_extension_ids(instances text[], hours bigint[], ids text[], max_ids integer)
RETURNS TABLE (set_instance text, set_hour bigint, set_ids text[])
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  k record;
  admitted text[];
  added text[];
BEGIN
  FOR k IN SELECT DISTINCT g.instance, g.hour FROM unnest(instances, hours) AS g (instance, hour) ORDER BY 1, 2 LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended('extscope:extension-ids:' || k.instance, k.hour));
    admitted := ARRAY(SELECT l.extension_id FROM extension_id_limits l WHERE l.instance = k.instance AND l.hour = k.hour);
    added := ARRAY(
      SELECT n.id FROM unnest(instances, hours, ids) WITH ORDINALITY AS n (instance, hour, id, position)
      WHERE n.instance = k.instance AND n.hour = k.hour AND NOT (n.id = ANY (admitted))
      ORDER BY n.position LIMIT greatest(max_ids - cardinality(admitted), 0));
    INSERT INTO extension_id_limits (instance, hour, extension_id) SELECT k.instance, k.hour, unnest(added) ON CONFLICT DO NOTHING;
    set_instance := k.instance;
    set_hour := k.hour;
    set_ids := admitted || added;
    RETURN NEXT;
  END LOOP;
END
$$;
