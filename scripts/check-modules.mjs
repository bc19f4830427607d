// npm run check:modules (part of npm run lint): the import rules of .dependency-cruiser.mjs over
// src/ and web/src/, then the cycles between modules on the actual graph. Exits 1, naming the files,
// on a broken rule, an undeclared module folder or a cycle between modules (docs/architecture.md#modules).
import { readdirSync, statSync } from 'node:fs';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { cycles, modules, moduleOf } from './modules.mjs';

const options = await extractDepcruiseOptions('./.dependency-cruiser.mjs');
const result = await cruise(['src', 'web/src'], options, undefined, {
  tsConfig: extractTSConfig(options.tsConfig.fileName),
});
const { modules: files, summary } = result.output;
let failed = false;

// 1. Every module folder is declared.
const folders = (dir, prefix) =>
  readdirSync(dir)
    .filter((entry) => statSync(`${dir}/${entry}`).isDirectory())
    .map((entry) => prefix + entry);
for (const name of [...folders('src/modules', ''), ...folders('web/src', 'web/')]) {
  if (!(name in modules)) {
    failed = true;
    console.error(`undeclared module: ${name} (declare it and what it may import in scripts/modules.mjs)`);
  }
}

// 2. The rules: layers, web boundaries, and each module's declared imports.
const byRule = new Map();
for (const v of summary.violations) byRule.set(v.rule.name, [...(byRule.get(v.rule.name) ?? []), v]);
const comments = new Map(options.ruleSet.forbidden.map((rule) => [rule.name, rule.comment]));
for (const [rule, violations] of byRule) {
  failed = true;
  console.error(`${rule}: ${comments.get(rule)}`);
  for (const v of violations) console.error(`  ${v.from} → ${v.to}`);
}

// 3. Cycles between modules, on the actual graph (dependency-cruiser's own `circular` is per file).
const edges = new Map();
for (const file of files) {
  const from = moduleOf(file.source);
  if (!from) continue;
  for (const dependency of file.dependencies) {
    const to = moduleOf(dependency.resolved);
    if (!to || to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    const importers = edges.get(from);
    importers.set(to, [...(importers.get(to) ?? []), `${file.source} → ${dependency.resolved}`]);
  }
}
const graph = new Map([...edges].map(([from, to]) => [from, [...to.keys()]]));
const found = cycles(graph);
for (const component of found) {
  failed = true;
  console.error(`module cycle: ${component.join(', ')}`);
  for (const from of component)
    for (const to of component) {
      const lines = edges.get(from)?.get(to) ?? [];
      for (const line of lines.slice(0, 3)) console.error(`  ${from} → ${to}: ${line}`);
      if (lines.length > 3) console.error(`  ${from} → ${to}: and ${lines.length - 3} more`);
    }
}

const modulesSeen = summary.totalCruised;
if (failed) {
  console.error(
    `check:modules failed: ${summary.violations.length} forbidden imports, ${found.length} module cycles (${modulesSeen} files)`,
  );
  process.exit(1);
}
console.log(`check:modules: ${modulesSeen} files, every import allowed, 0 module cycles`);
