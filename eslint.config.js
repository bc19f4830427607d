import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';

// web/src/<app>/ (console, later driver and customer) and the console's features
// (web/src/console/<feature>/, one folder deep) import one another only through web/src/shared/,
// and shared code imports no app (docs/console.md#layout). The rule sees the path as written, so
// each depth has its own pattern: app files, feature files, shared files one folder deep at most.
const webImports = (regex, message) => ['error', { patterns: [{ regex, message }] }];
const webBoundaries = [
  {
    files: ['web/src/*/*.{ts,tsx}'],
    ignores: ['web/src/shared/**'],
    rules: { 'no-restricted-imports': webImports('^\\.\\./(?!shared/)', 'An app imports another app only through web/src/shared/.') },
  },
  {
    files: ['web/src/*/*/*.{ts,tsx}'],
    ignores: ['web/src/shared/**'],
    rules: {
      'no-restricted-imports': webImports(
        '^\\.\\./([^./][^/]*/|\\.\\./(?!shared/))',
        'A feature imports another feature, or another app, only through web/src/shared/.',
      ),
    },
  },
  {
    files: ['web/src/shared/*.{ts,tsx}'],
    rules: { 'no-restricted-imports': webImports('^\\.\\./', 'web/src/shared/ imports no app.') },
  },
  {
    files: ['web/src/shared/*/*.{ts,tsx}'],
    rules: { 'no-restricted-imports': webImports('^\\.\\./\\.\\./', 'web/src/shared/ imports no app.') },
  },
];

// Backend layers, bottom up: config.ts; db/; shared/; http/ and sms/; modules/; the composition root
// (deps, services, background, app, server, worker, worker-app); cli/. A file imports its own layer
// and those below it, never one above (docs/architecture.md#layers). The rule sees the path as
// written, so each folder depth has its patterns with that many `../` in front; a file matches one
// block only (a later block replaces an earlier one's list for the same rule).
const COMPOSITION = 'app|background|deps|server|services|worker|worker-app';
const folder = (names, message) => ({ tail: `(?:${names})/`, message });
const topFile = (names, message) => ({ tail: `(?:${names})\\.js$`, message });
const NO_CLI = folder('cli', 'src/cli/ is imported by src/cli/ only.');
const layer = (files, depth, rules, extra = []) => ({
  files,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          ...rules.map(({ tail, message }) => ({ regex: `^${depth === 0 ? '\\./' : `(?:\\.\\./){${depth}}`}${tail}`, message })),
          ...extra,
        ],
      },
    ],
  },
});
/** What `src/<dir>` may not import: those folders and top-level files, and cli/. */
const above = (dir, folders, files = COMPOSITION) => [
  folder(folders, `src/${dir} imports nothing from ${folders.split('|').join('/, ')}/ (docs/architecture.md#layers).`),
  topFile(files, `src/${dir} imports none of ${files.split('|').join(', ')} (docs/architecture.md#layers).`),
  NO_CLI,
];
const DB_RULES = above('db/', 'modules|http|shared|sms|config', `${COMPOSITION}|config`);
const MODULE_RULES = [
  topFile('app|background|server|services|worker|worker-app', 'A module imports no composition file (deps.ts and config.ts it may).'),
  NO_CLI,
];
const otherKind = (kind) => [{ regex: `^(?:\\.\\./|\\.\\./\\.\\./modules/)${kind}/`, message: 'rides/ and packages/ import one another never: what both need is in jobs/.' }];
const backendLayers = [
  layer(['src/*.ts'], 0, [NO_CLI]),
  // config.ts and config/ are the bottom: config.ts imports only its own folder, which imports nothing else.
  layer(['src/config.ts'], 0, above('config.ts', 'modules|http|db|shared|sms')),
  layer(['src/config/*.ts'], 1, above('config/', 'modules|http|db|shared|sms', `${COMPOSITION}|config`)),
  layer(['src/db/*.ts'], 1, DB_RULES),
  layer(['src/db/*/*.ts'], 2, DB_RULES),
  // An entry point (npm run migrate), like server.ts, reads the configuration.
  layer(['src/db/migrate-cli.ts'], 1, above('db/', 'modules|http|shared|sms')),
  layer(['src/shared/*.ts'], 1, above('shared/', 'modules|http|sms')),
  layer(['src/http/*.ts'], 1, above('http/', 'modules|sms')),
  layer(['src/sms/*.ts'], 1, above('sms/', 'modules|http')),
  layer(['src/modules/*/*.ts'], 2, MODULE_RULES),
  layer(['src/modules/rides/*.ts'], 2, MODULE_RULES, otherKind('packages')),
  layer(['src/modules/packages/*.ts'], 2, MODULE_RULES, otherKind('rides')),
];

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'dist/', 'dist-test/', 'dist-test-start/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly', AbortController: 'readonly', performance: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  // React's two rules of hooks (not the compiler's rules): hooks at the top level, effects list what they read.
  {
    files: ['web/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
  },
  ...webBoundaries,
  ...backendLayers,
);
