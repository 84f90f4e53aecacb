-- extscope collector schema, version 9.
--
-- Instance cells: one instance's series without their client (name, version), method, outcome or server identity.
-- Request instance cells keep the client's and the server's declaration state; extension instance cells the id, its
-- flags, the server's declaration state and the `-32021` flag. Rows by instance and a cell's split across instances
-- are summed from their rollups: per instance a row per declaration state and per extension id and flags, however
-- many clients it answered, with a daily level as the cells have. Unique by their columns (the index below); the
-- writer finds an instance's cells by its `instance_ref`.
CREATE TABLE instance_cells (
  id                 INTEGER PRIMARY KEY,
  instance_ref       INTEGER NOT NULL REFERENCES instances (id),
  kind               INTEGER NOT NULL,
  client_declaration TEXT,
  server_declaration TEXT,
  extension_id       TEXT,
  client_declared    INTEGER,
  server_declared    INTEGER,
  negotiated         INTEGER,
  required           INTEGER
);
CREATE UNIQUE INDEX instance_cells_identity ON instance_cells (
  instance_ref, kind, coalesce(client_declaration, ''), coalesce(server_declaration, ''), coalesce(extension_id, ''),
  coalesce(client_declared, -1), coalesce(server_declared, -1), coalesce(negotiated, -1), coalesce(required, -1)
);

-- Every series names its instance cell; the fold adds each increment to it too.
ALTER TABLE series ADD COLUMN instance_cell_id INTEGER REFERENCES instance_cells (id);

CREATE TABLE instance_cell_minute (
  instance_cell_id INTEGER NOT NULL,
  minute           INTEGER NOT NULL,
  count            INTEGER NOT NULL,
  PRIMARY KEY (instance_cell_id, minute)
) WITHOUT ROWID;

CREATE TABLE instance_cell_hour (
  instance_cell_id INTEGER NOT NULL,
  hour             INTEGER NOT NULL,
  count            INTEGER NOT NULL,
  PRIMARY KEY (instance_cell_id, hour)
) WITHOUT ROWID;

CREATE TABLE instance_cell_day (
  instance_cell_id INTEGER NOT NULL,
  day              INTEGER NOT NULL,
  count            INTEGER NOT NULL,
  PRIMARY KEY (instance_cell_id, day)
) WITHOUT ROWID;

-- The series already stored get their instance cells, and the new rollups what their series' rollups hold (the
-- increments not folded yet are added by the next fold, to every level). The days are summed from the hours kept.
INSERT INTO instance_cells (instance_ref, kind, client_declaration, server_declaration, extension_id, client_declared, server_declared, negotiated, required)
SELECT DISTINCT instance_ref, kind,
       CASE WHEN kind = 0 THEN client_declaration END, server_declaration,
       CASE WHEN kind = 1 THEN extension_id END, CASE WHEN kind = 1 THEN client_declared END, CASE WHEN kind = 1 THEN server_declared END,
       CASE WHEN kind = 1 THEN negotiated END, CASE WHEN kind = 1 THEN required END
FROM series;

UPDATE series SET instance_cell_id = (
  SELECT c.id FROM instance_cells c
  WHERE c.instance_ref = series.instance_ref AND c.kind = series.kind
    AND c.client_declaration IS (CASE WHEN series.kind = 0 THEN series.client_declaration END)
    AND c.server_declaration IS series.server_declaration
    AND c.extension_id IS (CASE WHEN series.kind = 1 THEN series.extension_id END)
    AND c.client_declared IS (CASE WHEN series.kind = 1 THEN series.client_declared END)
    AND c.server_declared IS (CASE WHEN series.kind = 1 THEN series.server_declared END)
    AND c.negotiated IS (CASE WHEN series.kind = 1 THEN series.negotiated END)
    AND c.required IS (CASE WHEN series.kind = 1 THEN series.required END)
);

INSERT INTO instance_cell_minute (instance_cell_id, minute, count)
SELECT s.instance_cell_id, m.minute, CAST(min(total(m.count), 9007199254740991) AS INTEGER)
FROM series_minute m JOIN series s ON s.id = m.series_id GROUP BY 1, 2;

INSERT INTO instance_cell_hour (instance_cell_id, hour, count)
SELECT s.instance_cell_id, h.hour, CAST(min(total(h.count), 9007199254740991) AS INTEGER)
FROM series_hour h JOIN series s ON s.id = h.series_id GROUP BY 1, 2;

INSERT INTO instance_cell_day (instance_cell_id, day, count)
SELECT s.instance_cell_id, h.hour / 24, CAST(min(total(h.count), 9007199254740991) AS INTEGER)
FROM series_hour h JOIN series s ON s.id = h.series_id GROUP BY 1, 2;
