// The PostgreSQL rollup tables rewritten in the order a running collector writes them: by bucket, then owner.
//
// `extscope db copy` inserts each rollup table in its primary key's order (owner, bucket), so a copied database keeps
// each cell's hours together and spreads each hour over as many pages as it has cells (the open hour of the matrix
// benchmark's data set: 3,413 rows on 3,413 pages). A collector's fold adds each bucket's rows as its minutes arrive,
// so a live database holds an hour's rows together and spreads each cell's hours over the pages of as many hours.
// Reads touch different pages in the two layouts (the open hour from the hour out: few pages live, one per row
// copied; a cell's 24 hours: 24 pages live, one or two copied), so the benchmark can measure either.
import { ROLLUP_LEVELS } from '../../../dist/collector/store/common/rollup-levels.js';
import { pg } from './postgres-db.mjs';

/** Rewrites every rollup level of the database at `url` in (bucket, owner) order, then vacuums and analyses it. */
export async function orderRollupsByTime(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const level of ROLLUP_LEVELS) {
      const index = `${level.table}_bench_time_order`;
      await client.query(`CREATE INDEX ${index} ON ${level.table} (${level.bucket}, ${level.ownerColumn})`);
      await client.query(`CLUSTER ${level.table} USING ${index}`);
      await client.query(`DROP INDEX ${index}`);
    }
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}
