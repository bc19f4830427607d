import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
  ...webBoundaries,
);
