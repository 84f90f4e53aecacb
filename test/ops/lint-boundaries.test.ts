/**
 * The import boundaries hold because the lint refuses to let them go: each rule is checked here by planting the
 * import it forbids (and one it allows) in a file where it would matter, and linting it with the project's config.
 */
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/processes.js';

const eslint = new ESLint({ cwd: ROOT });

/** The messages of the import rules for `source` as if it were the file at `path` (a module the type-aware rules do not read). */
async function importErrors(path: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: join(ROOT, path) });
  return (result?.messages ?? []).filter((message) => /restricted-imports/.test(message.ruleId ?? '')).map((message) => message.message);
}

describe('lint: the import boundaries, each checked by a planted import', () => {
  const cases: [string, string, RegExp][] = [
    ['collector/store/postgres/planted.mjs', "import { openSqliteStore } from '../sqlite/index.js';", /only collector\/store\/common/],
    ['collector/store/postgres/writer/planted.mjs', "import { safeSum } from '../../sqlite/sql.js';", /only collector\/store\/common/],
    ['collector/store/sqlite/planted.mjs', "import { openPostgresStore } from '../postgres/index.js';", /only collector\/store\/common/],
    ['collector/store/common/planted.mjs', "import { safeSum } from '../sqlite/sql.js';", /imports neither/],
    ['collector/store/planted.mjs', "import { AlertEngine } from '../alerting/engine.js';", /knows nothing of alerts/],
    ['collector/store/sqlite/planted.mjs', "import { ENVIRONMENT } from '../../config.js';", /knows nothing of alerts or the configuration/],
    ['collector/store/postgres/planted.mjs', "import { matrix } from '../../analysis/matrix.js';", /downstream of every stage/],
    ['collector/alerting/delivery/planted.mjs', "import { ENVIRONMENT } from '../../config.js';", /read by collector\/config\.ts/],
    [
      'collector/analysis/planted.mjs',
      "import { planTrend } from '../store/common/trends.js';",
      /store query types \(store\/query\/\), never a backend, what backends share/,
    ],
    [
      'collector/http/planted.mjs',
      "import { stepParameters } from '../store/common/queries.js';",
      /read through the store interface \(store\.ts, store\/query\/\)/,
    ],
    ['collector/model/planted.mjs', "import { readMatrix } from '../analysis/read-matrix.js';", /shared vocabulary/],
    ['collector/analysis/planted.mjs', "import { ExtscopeInstrumentation } from '../../agent/index.js';", /only contract\/ of the project/],
    ['collector/store/sqlite/planted.mjs', "import { render } from '../../../dashboard/src/main.js';", /only contract\/ of the project/],
    ['agent/planted.mjs', "import Fastify from 'fastify';", /no database, HTTP framework or gRPC/],
    ['agent/planted.mjs', "import { startCollector } from '../collector/index.js';", /may import only contract/],
    ['dashboard/src/views/planted.mjs', "import { matrixView } from './matrix/view.js';", /a view never imports another view/],
    ['dashboard/src/views/planted.mjs', "import { trendsView } from './trends.js';", /a view never imports another view/],
    ['dashboard/src/views/matrix/planted.mjs', "import { trendsView } from '../trends.js';", /a view never imports another view/],
    ['dashboard/src/views/matrix/planted.mjs', "import { changesView } from '../../views/changes.js';", /a view never imports another view/],
    ['dashboard/src/components/planted.mjs', "import { matrixView } from '../views/matrix/view.js';", /never a view/],
    ['dashboard/src/lib/planted.mjs', "import { FilterBar } from '../components/filter-bar.js';", /imports no component and no view/],
    ['dashboard/src/views/planted.mjs', "import { getJson } from '../../../agent/index.js';", /sees only the query API/],
  ];
  for (const [path, source, message] of cases) {
    it(`${path}: ${source}`, async () => {
      const errors = await importErrors(path, source);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(message);
    });
  }

  it('allows what the boundaries allow: a dialect importing common/, the store importing model/, analysis importing store/query/', async () => {
    expect(await importErrors('collector/store/postgres/planted.mjs', "import { CELL_COLUMNS } from '../common/columns.js';")).toEqual([]);
    expect(await importErrors('collector/store/sqlite/writer/planted.mjs', "import { identityHash } from '../../common/identity.js';")).toEqual([]);
    expect(await importErrors('collector/store/planted.mjs', "import { MS_PER_MINUTE } from '../model/time.js';")).toEqual([]);
    expect(await importErrors('collector/analysis/planted.mjs', "import { TREND } from '../store/query/trends.js';")).toEqual([]);
  });

  it('allows a view lib/ and components/, and the files of a view folder each other', async () => {
    expect(
      await importErrors(
        'dashboard/src/views/planted.mjs',
        "import { matrixParams } from '../lib/params.js';\nimport { chartPanel } from '../components/chart-panel.js';",
      ),
    ).toEqual([]);
    expect(
      await importErrors(
        'dashboard/src/views/matrix/planted.mjs',
        "import { MatrixGrid } from './grid.js';\nimport { matrixParams } from '../../lib/params.js';",
      ),
    ).toEqual([]);
    expect(await importErrors('dashboard/src/components/planted.mjs', "import { h } from '../lib/dom.js';\nimport { draw } from './charts.js';")).toEqual([]);
    expect(
      await importErrors(
        'dashboard/src/main.mjs',
        "import { matrixView } from './views/matrix/view.js';\nimport { FilterBar } from './components/filter-bar.js';",
      ),
    ).toEqual([]);
  });
});
