import { parseArgs } from 'node:util';
import { isPostgresUrl } from '../../collector/store/postgres/connection.js';
import { TargetNotEmptyError, copySqliteToPostgres } from '../../collector/store/copy.js';

const USAGE = `Usage: extscope db copy --from PATH.db --to postgres://… [--force]

Copies an SQLite database (the collector's --db file) into a PostgreSQL database, in one transaction, so that
collector replicas on PostgreSQL continue where the SQLite collector stopped: totals, instances, cumulative
state and the dedup log of recent exports. Stop the SQLite collector first. The SQLite file is brought to the
current schema (as a collector start would) before it is read.

Options:
  --from PATH   The SQLite database file
  --to URL      postgres://user@host:port/database (settings it leaves out come from PGHOST, PGUSER, PGPASSWORD,
                PGSSLMODE, …; TLS with ?sslmode=require or verify-full)
  --force       Replace what the target already holds (without it, a target with extscope data is refused)
  -h, --help    Show this help

Prints the row count of every table in both databases; exits 1 unless they are all equal.
`;

/** `extscope db copy`. */
export async function runDbCopy(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: { from: { type: 'string' }, to: { type: 'string' }, force: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    process.stderr.write(`extscope db copy: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.from === undefined || values.to === undefined || !isPostgresUrl(values.to)) {
    process.stderr.write(`extscope db copy: --from PATH.db and --to postgres://… are required\n\n${USAGE}`);
    return 2;
  }
  try {
    const reports = await copySqliteToPostgres(values.from, values.to, values.force === true ? 'replace' : 'refuse-non-empty', (line) =>
      process.stderr.write(`${line}\n`),
    );
    for (const report of reports) process.stdout.write(`${report.table}\t${report.source}\t${report.target}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`extscope db copy: ${(error as Error).message}\n`);
    return error instanceof TargetNotEmptyError ? 3 : 1;
  }
}
