-- extscope collector schema for PostgreSQL, version 11.
--
-- The series a `-32021` figure can come from: refused requests, and the extension ids a refused method required.
-- They are few among very many, and the trend of refusals reads only them: without this index that read scanned
-- every series. (The SQLite store keeps the same set in a table its triggers maintain.)
CREATE INDEX series_required ON series (id) WHERE (kind = 0 AND status_code = '-32021') OR (kind = 1 AND required = 1);
