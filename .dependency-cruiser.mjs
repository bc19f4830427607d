// The import rules (npm run check:modules, part of npm run lint; docs/architecture.md#layers and #modules).
// They match resolved paths (relative to the repository root), so they hold at any folder depth, and
// they see type-only imports, dynamic import() and tests as well.
import { declarationProblems, folderOf, modules } from './scripts/modules.mjs';

const problems = declarationProblems();
if (problems.length) throw new Error(`scripts/modules.mjs: ${problems.join('; ')}`);

const COMPOSITION = '^src/(app|background|deps|server|services|worker|worker-app)\\.ts$';
const COMPOSITION_BUT_DEPS = '^src/(app|background|server|services|worker|worker-app)\\.ts$';
const esc = (name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Backend layers, bottom up: config; db/; shared/; http/ and sms/; modules/; the composition root; cli/. */
const layers = [
  {
    name: 'layer-cli',
    comment: 'src/cli/ is imported by src/cli/ only.',
    from: { path: '^src/', pathNot: '^src/cli/' },
    to: { path: '^src/cli/' },
  },
  {
    name: 'layer-config',
    comment: 'config.ts and config/ are the bottom: they import only config/ from src/.',
    from: { path: '^src/config(\\.ts$|/)' },
    to: { path: '^src/', pathNot: '^src/config/' },
  },
  {
    name: 'layer-db',
    comment: 'src/db/ imports nothing from src/ but db/ (its entry migrate-cli.ts reads config.ts too).',
    from: { path: '^src/db/', pathNot: '^src/db/migrate-cli\\.ts$' },
    to: { path: '^src/', pathNot: '^src/db/' },
  },
  {
    name: 'layer-db-entry',
    comment: 'src/db/migrate-cli.ts imports db/, config.ts and config/ only.',
    from: { path: '^src/db/migrate-cli\\.ts$' },
    to: { path: '^src/', pathNot: '^src/(db/|config/|config\\.ts$)' },
  },
  {
    name: 'layer-shared',
    comment: 'src/shared/ imports no module, no http/ or sms/, no composition file.',
    from: { path: '^src/shared/' },
    to: { path: ['^src/(modules|http|sms)/', COMPOSITION] },
  },
  {
    name: 'layer-http',
    comment: 'src/http/ imports no module, no sms/, no composition file.',
    from: { path: '^src/http/' },
    to: { path: ['^src/(modules|sms)/', COMPOSITION] },
  },
  {
    name: 'layer-sms',
    comment: 'src/sms/ imports no module, no http/, no composition file.',
    from: { path: '^src/sms/' },
    to: { path: ['^src/(modules|http)/', COMPOSITION] },
  },
  {
    name: 'layer-modules',
    comment: 'A module imports no composition file (deps.ts and config.ts it may).',
    from: { path: '^src/modules/' },
    to: { path: COMPOSITION_BUT_DEPS },
  },
];

/** The web apps: one app imports another only through web/src/shared/; so does a feature of an app. */
const web = [
  {
    name: 'web-app',
    comment: 'An app imports another app only through web/src/shared/.',
    from: { path: '^web/src/([^/]+)/', pathNot: '^web/src/shared/' },
    to: { path: '^web/src/', pathNot: '^web/src/(shared|$1)/' },
  },
  {
    name: 'web-feature',
    comment: "An app's feature (web/src/<app>/<feature>/) imports another feature only through web/src/shared/.",
    from: { path: '^web/src/([^/]+)/([^/]+)/', pathNot: '^web/src/shared/' },
    to: { path: '^web/src/$1/[^/]+/', pathNot: '^web/src/$1/$2/' },
  },
  {
    name: 'web-shared',
    comment: 'web/src/shared/ imports no app.',
    from: { path: '^web/src/shared/' },
    to: { path: '^web/src/', pathNot: '^web/src/shared/' },
  },
];

/** One rule per declared module: what it may import of the other modules (scripts/modules.mjs). */
const moduleRules = Object.entries(modules).map(([name, { imports }]) => {
  const root = name.startsWith('web/') ? 'web/src/' : 'src/modules/';
  const allowed = [name, ...imports].map((m) => esc(folderOf(m).slice(root.length, -1)));
  return {
    name: `module-${name.replace('/', '-')}`,
    comment:
      `${name} may import ${imports.length ? imports.join(', ') : 'no other module'} ` +
      '(scripts/modules.mjs; add an edge there, then npm run modules:doc)',
    from: { path: `^${esc(folderOf(name))}` },
    to: { path: `^${esc(root)}[^/]+/`, pathNot: `^${esc(root)}(${allowed.join('|')})/` },
  };
});

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [...layers, ...web, ...moduleRules].map((rule) => ({ severity: 'error', ...rule })),
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['schema\\.d\\.ts$', '^node_modules/'] },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'] },
  },
};
