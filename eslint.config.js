// Lint, and the import boundaries that keep data flowing one way:
//   contract/ imports nothing of the project; agent/ and collector/ import only contract/ of each other;
//   bin/ (the collector package's CLI) reaches the agent only through its package, @extscope/agent;
//   inside collector/, stages import model/ and otlp/ freely, and never a stage further down the pipeline;
//   dashboard/ imports of the collector only the types of the query API's route schemas, and its views never
//   import each other (shared pieces live in dashboard/src/lib/ and components/).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const restrict = (files, patterns) => ({ files, rules: { 'no-restricted-imports': ['error', { patterns }] } });
const restrictValues = (files, patterns) => ({
  files,
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: patterns.map((pattern) => ({ ...pattern, allowTypeImports: true })) }] },
});
const forbid = (group, message) => ({ group, message });
const forbidRegex = (regex, message) => ({ regex, message });
// A later entry replaces an earlier one's rule for the files it matches: every collector/ entry repeats this one.
const collectorOwn = { group: ['**/agent/**', '**/dashboard/**'], message: 'collector/ may import only contract/ of the project.' };

export default tseslint.config(
  // collector/otlp/generated: protobufjs static code, written by scripts/generate-otlp-proto.mjs.
  { ignores: ['dist/**', 'agent/dist/**', 'node_modules/**', 'dashboard/dist/**', 'coverage/**', 'scratch/**', 'collector/otlp/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: globals.node },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      'no-constant-condition': ['error', { checkLoops: false }],
      // The agent forwards a callback's `arguments` unchanged on purpose (whatever the transport passes).
      'prefer-rest-params': 'off',
    },
  },
  // Type-aware: a promise nobody awaits loses its rejection (an unhandled rejection ends the process, or the error
  // is never seen). Every deliberate fire-and-forget says so with `void`.
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.test.json', './dashboard/tsconfig.json', './test/dashboard/page/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: { '@typescript-eslint/no-floating-promises': 'error', '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }] },
  },
  { files: ['dashboard/src/**'], languageOptions: { globals: globals.browser } },
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs' }, rules: { '@typescript-eslint/no-require-imports': 'off' } },

  restrict(['contract/**'], [forbidRegex('^(?!\\./)', 'contract/ is dependency-free: it imports only its own files.')]),
  restrict(
    ['agent/**'],
    [
      forbid(['**/collector/**', '**/bin/**', '**/dashboard/**'], 'agent/ may import only contract/ of the project.'),
      forbid(
        ['fastify', 'fastify/*', '@fastify/*', 'pg', 'pg/*', 'better-sqlite3', '@grpc/*'],
        'the agent package carries no database, HTTP framework or gRPC dependency (agent/package.json).',
      ),
    ],
  ),
  // gRPC is an optional peer of the agent, required only when OTEL_EXPORTER_OTLP_PROTOCOL=grpc asks for it.
  restrictValues(
    ['agent/**'],
    [forbid(['@opentelemetry/exporter-*-otlp-grpc'], 'the gRPC exporters are optional peers: load them lazily (exporters.ts), import only their types.')],
  ),
  restrict(
    ['bin/**'],
    [
      forbid(
        ['../agent/**', '../../agent/**'],
        'the CLI reaches the agent through its package (@extscope/agent/wrap, /proxy), as an installed collector does.',
      ),
    ],
  ),
  restrict(['collector/**'], [collectorOwn]),
  // (A later entry replaces an earlier one's rule for the files it matches: each page entry repeats the page's own.)
  // Inside the page, as in Prometheus's web UI: main.ts mounts the views, a view never imports another view (what
  // two views share is in lib/ or components/), components/ build on lib/, and lib/ knows neither.
  ...((page) => [
    restrict(['dashboard/**'], page),
    restrict(
      ['dashboard/src/lib/**'],
      [...page, forbidRegex('(^|/)(components|views)/|(^|/)main\\.js$', 'lib/ is what the whole page shares: it imports no component and no view.')],
    ),
    restrict(
      ['dashboard/src/components/**'],
      [...page, forbidRegex('(^|/)views/|(^|/)main\\.js$', 'a component is shared by the views: it imports lib/ and components/, never a view.')],
    ),
    // A view is a file in views/, or a folder there (views/matrix/) whose files import each other and no other view.
    restrict(
      ['dashboard/src/views/*'],
      [...page, forbidRegex('^\\./|(^|/)views/|(^|/)main\\.js$', 'a view never imports another view: what views share goes in lib/ or components/.')],
    ),
    restrict(
      ['dashboard/src/views/*/**'],
      [...page, forbidRegex('^\\.\\./[^.]|(^|/)views/|(^|/)main\\.js$', 'a view never imports another view: what views share goes in lib/ or components/.')],
    ),
  ])([
    forbid(['**/agent/**', '**/contract/**', '**/bin/**'], 'the dashboard sees only the query API (/api/v1) over HTTP.'),
    forbidRegex(
      '(^|/)collector/(?!http/([\\w-]+/)*schema\\.js$|http/schemas/shared\\.js$)',
      'the dashboard sees only the query API (/api/v1) over HTTP; of the collector it reads only the route schemas its answer types come from.',
    ),
  ]),
  // Its answer types are derived from the route schemas; `import type` keeps the collector out of the bundle.
  restrictValues(
    ['dashboard/**'],
    [
      forbid(
        ['**/collector/http/**/schema.js', '**/collector/http/schemas/shared.js'],
        'the dashboard imports route schemas as types only (`import type`): the bundle carries no collector code.',
      ),
    ],
  ),
  restrict(
    ['collector/model/**', 'collector/otlp/**'],
    [
      collectorOwn,
      forbid(
        ['**/receiver/**', '**/processor/**', '**/store/**', '**/analysis/**', '**/http/**', '**/ops/**', '**/service*', '**/config*'],
        'model/ and otlp/ are the shared vocabulary: they import no stage.',
      ),
    ],
  ),
  restrict(
    ['collector/receiver/**'],
    [
      collectorOwn,
      forbid(
        ['**/processor/**', '**/store/**', '**/analysis/**', '**/http/**', '**/ops/**', '**/service*'],
        'a receiver only hands batches to the next consumer (model/).',
      ),
    ],
  ),
  restrict(
    ['collector/processor/**'],
    [
      collectorOwn,
      forbid(
        ['**/receiver/**', '**/store/**', '**/analysis/**', '**/http/**', '**/ops/**', '**/service*'],
        'a processor only knows the next consumer (model/).',
      ),
    ],
  ),
  // (A later entry replaces an earlier one's rule for the files it matches: each store entry repeats the store's own.)
  ...((store) => [
    restrict(['collector/store/**'], [collectorOwn, store]),
    // The two dialects share collector/store/common/ and know nothing of each other; common/ knows neither.
    restrict(
      ['collector/store/postgres/**'],
      [collectorOwn, store, forbid(['**/sqlite/**'], 'the PostgreSQL store shares with the SQLite store only collector/store/common/.')],
    ),
    restrict(
      ['collector/store/sqlite/**'],
      [collectorOwn, store, forbid(['**/postgres/**'], 'the SQLite store shares with the PostgreSQL store only collector/store/common/.')],
    ),
    restrict(
      ['collector/store/common/**'],
      [collectorOwn, store, forbid(['**/sqlite/**', '**/postgres/**'], 'common/ is what both dialects share: it imports neither.')],
    ),
  ])(
    forbid(
      [
        '**/receiver/**',
        '**/processor/**',
        '**/analysis/**',
        '**/alerting/**',
        '**/http/**',
        '**/ops/**',
        '**/service*',
        '**/collector/config*',
        '../../config*',
        '../../../config*',
      ],
      'the store is downstream of every stage, and knows nothing of alerts or the configuration (its vocabulary is in model/).',
    ),
  ),
  restrict(
    ['collector/analysis/**'],
    [
      collectorOwn,
      forbid(
        ['**/receiver/**', '**/processor/**', '**/store/common/**', '**/store/sqlite/**', '**/store/postgres/**', '**/http/**', '**/ops/**', '**/service*'],
        'analysis/ is pure: it reads store records and the store query types (store/query/), never a backend, what backends share, or a route.',
      ),
    ],
  ),
  ...((alerting) => [
    restrict(['collector/alerting/**'], [collectorOwn, alerting]),
    // The collector's configuration reads each component's; a component never reads the collector's.
    restrict(
      ['collector/alerting/delivery/**'],
      [collectorOwn, alerting, forbidRegex('^(\\.\\./)+config\\.js$', 'the delivery configuration is read by collector/config.ts, not the other way round.')],
    ),
  ])(
    forbid(
      ['**/receiver/**', '**/processor/**', '**/store/common/**', '**/store/sqlite/**', '**/store/postgres/**', '**/http/**', '**/service*'],
      'alert rules read through the store interface (store.ts, store/query/) and analysis/.',
    ),
  ),
  restrict(
    ['collector/http/**', 'collector/ops/**'],
    [
      collectorOwn,
      forbid(
        ['**/receiver/**', '**/processor/**', '**/store/common/**', '**/store/sqlite/**', '**/store/postgres/**', '**/service*'],
        'routes read through the store interface (store.ts, store/query/) and analysis/.',
      ),
    ],
  ),
);
