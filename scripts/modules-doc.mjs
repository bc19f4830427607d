// npm run modules:doc: writes the module map of docs/architecture.md (between its two marker
// comments) from the declaration in scripts/modules.mjs. test/module-map.test.ts fails when the
// doc and the declaration differ.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { root, runsAsScript } from './build-stamp.mjs';
import { folderOf, modules } from './modules.mjs';

export const docPath = path.join(root, 'docs/architecture.md');
export const BEGIN = '<!-- module map: generated from scripts/modules.mjs by npm run modules:doc; do not edit -->';
export const END = '<!-- end of the module map -->';

const id = (name) => name.replace(/[^a-z0-9]/g, '_');

/** The map: a table of the modules and what each may import, and the same as a Mermaid graph. */
export function renderModuleMap(declared = modules) {
  const names = Object.keys(declared);
  const importedBy = (name) => names.filter((other) => declared[other].imports.includes(name));
  const list = (items) => (items.length ? items.map((m) => `\`${m}\``).join(', ') : '—');
  const rows = [
    ['Module', 'Folder', 'May import', 'What'],
    ...names.map((name) => [
      `\`${name}\``,
      `\`${folderOf(name)}\``,
      list(declared[name].imports),
      declared[name].about,
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  const line = (cells) => `| ${cells.map((cell, i) => cell.padEnd(widths[i])).join(' | ')} |`;
  const table = [line(rows[0]), line(widths.map((w) => '-'.repeat(w))), ...rows.slice(1).map(line)];
  const graph = [
    '```mermaid',
    'graph LR',
    ...names.flatMap((name) =>
      declared[name].imports.length
        ? declared[name].imports.map((to) => `  ${id(name)}["${name}"] --> ${id(to)}["${to}"]`)
        : importedBy(name).length
          ? []
          : [`  ${id(name)}["${name}"]`],
    ),
    '```',
  ];
  return [BEGIN, '', ...table, '', ...graph, '', END].join('\n');
}

/** `doc` with its module map replaced by a fresh one; throws when the markers are missing. */
export function withModuleMap(doc, declared = modules) {
  const start = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${docPath}: the module map's markers are missing:\n${BEGIN}\n${END}`);
  return doc.slice(0, start) + renderModuleMap(declared) + doc.slice(end + END.length);
}

if (runsAsScript(import.meta.url)) {
  const before = readFileSync(docPath, 'utf8');
  const after = withModuleMap(before);
  if (after === before) console.log('docs/architecture.md: the module map is current');
  else {
    writeFileSync(docPath, after);
    console.log('docs/architecture.md: module map written');
  }
}
