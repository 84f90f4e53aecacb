import type Database from 'better-sqlite3';

/**
 * Adds the increments logged since the last fold (`point_log.seq` > `meta.folded_seq`) to every rollup level at
 * once (series per minute and hour; cells, per service and over all services, per minute, hour and day), in
 * one transaction. Set-based: increments from many exports to the same bucket become one upsert. Hourly and
 * daily levels are therefore never behind the minutes ("downsampling" is continuous); retention later drops
 * the minutes.
 */
export class Folder {
  private readonly statements: Database.Statement[];
  private readonly watermark: Database.Statement;
  private readonly advance: Database.Statement;
  private readonly transaction: () => void;

  constructor(db: Database.Database) {
    // The WHERE clause also keeps SQLite from reading ON CONFLICT as a join constraint of the SELECT.
    const upsert = (table: string, owner: string, bucket: string, expression: string, source = owner): Database.Statement =>
      db.prepare(`
        INSERT INTO ${table} (${owner}, ${bucket}, count)
        SELECT ${source}, ${expression}, sum(value) FROM point_log WHERE seq > @folded GROUP BY 1, 2
        ON CONFLICT (${owner}, ${bucket}) DO UPDATE SET count = count + excluded.count`);
    this.statements = [
      upsert('series_minute', 'series_id', 'minute', 'minute'),
      upsert('series_hour', 'series_id', 'hour', 'minute / 60'),
      upsert('cell_minute', 'cell_id', 'minute', 'minute'),
      upsert('cell_hour', 'cell_id', 'hour', 'minute / 60'),
      upsert('cell_day', 'cell_id', 'day', 'minute / 1440'),
      upsert('cell_minute', 'cell_id', 'minute', 'minute', 'all_cell_id'),
      upsert('cell_hour', 'cell_id', 'hour', 'minute / 60', 'all_cell_id'),
      upsert('cell_day', 'cell_id', 'day', 'minute / 1440', 'all_cell_id'),
    ];
    this.watermark = db.prepare("SELECT value FROM meta WHERE key = 'folded_seq'").pluck();
    this.advance = db.prepare("UPDATE meta SET value = (SELECT coalesce(max(seq), @folded) FROM point_log) WHERE key = 'folded_seq'");
    this.transaction = db.transaction(() => {
      const folded = this.watermark.get() as number;
      for (const statement of this.statements) statement.run({ folded });
      this.advance.run({ folded });
    });
  }

  fold(): void {
    this.transaction();
  }
}
