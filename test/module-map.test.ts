// The module map in docs/architecture.md is the declaration's (scripts/modules.mjs), and the import
// rules (.dependency-cruiser.mjs) hold at any folder depth. `npm run check:modules` runs them over the code.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { docPath, renderModuleMap, withModuleMap } from '../scripts/modules-doc.mjs';
import { cycles, declarationProblems, modules } from '../scripts/modules.mjs';

const root = path.resolve(import.meta.dirname, '..');

test('the module map in docs/architecture.md is the one generated from scripts/modules.mjs', () => {
  const doc = readFileSync(docPath, 'utf8');
  assert.equal(
    doc,
    withModuleMap(doc),
    'docs/architecture.md differs from scripts/modules.mjs: run npm run modules:doc',
  );
  const changed = { ...modules, geocoding: { ...modules.geocoding, imports: ['countries'] } };
  assert.notEqual(renderModuleMap(changed), renderModuleMap(), 'an edge more changes the map');
});

test('the declaration is acyclic and keeps money away from the job modules', () => {
  assert.deepEqual(declarationProblems(), []);
  const cyclic = { ...modules, countries: { ...modules.countries, imports: ['auth'] } };
  assert.deepEqual(declarationProblems(cyclic), ['the declared graph has a cycle: auth, countries']);
  const moneyToJobs = { ...modules, payouts: { ...modules.payouts, imports: ['ledger', 'jobs'] } };
  assert.match(declarationProblems(moneyToJobs).join('\n'), /payouts may not import jobs/);
});

test('cycles finds every strongly connected component of more than one module', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a', 'd']],
    ['d', ['e']],
    ['e', ['d']],
    ['f', ['a']],
  ]);
  assert.deepEqual(cycles(graph), [
    ['d', 'e'],
    ['a', 'b', 'c'],
  ]);
  assert.deepEqual(cycles(new Map([['a', ['b']]])), []);
});

test('the rules see resolved paths: a file two folders deep importing upward is caught', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'module-rules-'));
  try {
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    };
    write('src/app.ts', 'export const app = 1;\n');
    write('src/modules/rides/rides.ts', 'export const ride = 1;\n');
    write('src/modules/jobs/jobs.ts', 'export const job = 1;\n');
    // Two folders below their module, a type-only import upward, one into a module jobs/ may not import.
    write(
      'src/modules/jobs/deep/deeper/x.test.ts',
      "import type { app } from '../../../../app';\nimport { ride } from '../../../rides/rides';\n" +
        "import { job } from '../../jobs';\nexport type A = typeof app;\nexport const r = ride + job;\n",
    );
    write('src/db/tables/deep/x.ts', "import { app } from '../../../app';\nexport const a = app;\n");
    write('web/src/driver/main.tsx', 'export const main = 1;\n');
    write('web/src/shared/ui.tsx', 'export const ui = 1;\n');
    write('web/src/console/money/money.ts', 'export const money = 1;\n');
    write(
      'web/src/console/deliveries/deep/x.test.ts',
      "import type { main } from '../../../driver/main';\nimport { money } from '../../money/money';\n" +
        "import { ui } from '../../../shared/ui';\nexport type M = typeof main;\nexport const m = money + ui;\n",
    );
    write(
      'web/src/shared/map/deep/x.ts',
      "import { money } from '../../../console/money/money';\nexport const m = money;\n",
    );

    const options = await extractDepcruiseOptions(path.join(root, '.dependency-cruiser.mjs'));
    delete options.tsConfig;
    const result = await cruise(['src', 'web/src'], { ...options, baseDir: dir });
    assert.equal(typeof result.output, 'object');
    const found = (
      result.output as { summary: { violations: { from: string; to: string; rule: { name: string } }[] } }
    ).summary.violations
      .map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)
      .sort();
    assert.deepEqual(found, [
      'layer-db: src/db/tables/deep/x.ts → src/app.ts',
      'layer-modules: src/modules/jobs/deep/deeper/x.test.ts → src/app.ts',
      'module-jobs: src/modules/jobs/deep/deeper/x.test.ts → src/modules/rides/rides.ts',
      'module-web-console: web/src/console/deliveries/deep/x.test.ts → web/src/driver/main.tsx',
      'module-web-shared: web/src/shared/map/deep/x.ts → web/src/console/money/money.ts',
      'web-app: web/src/console/deliveries/deep/x.test.ts → web/src/driver/main.tsx',
      'web-feature: web/src/console/deliveries/deep/x.test.ts → web/src/console/money/money.ts',
      'web-shared: web/src/shared/map/deep/x.ts → web/src/console/money/money.ts',
    ]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
