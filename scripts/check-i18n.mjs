// `npm run check:i18n` (part of `npm run lint`), contract section 27 and docs/languages.md: fails on
// - a key of the English catalog missing in another language, or one there that English lacks;
// - a message that does not parse, or whose arguments ({code}, {minutes}…) differ from English's;
// - an unused key: English's keys must each be named in the sources (literally, or as the literal
//   start of a template such as `sms.code.${purpose}`);
// - user-facing text outside the catalogs in the files already converted (CONVERTED below): JSX
//   text and the attributes people read (aria-label, title, placeholder, alt, label) holding letters.
// The console, the driver app and the customer app join CONVERTED as they are converted.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseMessage, TYPE } from '@formatjs/icu-messageformat-parser';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Each catalog: where it lives, its languages, and the sources that use its keys. */
export const CATALOGS = [
  { name: 'server', dir: 'src/i18n', sources: ['src'] },
  { name: 'web', dir: 'web/src/shared/i18n', sources: ['web/src'] },
];
export const LOCALES = ['en', 'sw', 'fr'];

/** The files whose every word comes from the catalog (the apps follow as they are converted). */
export const CONVERTED = ['web/src/console/tracking/tracking.tsx', 'web/src/shared/i18n/i18n.tsx'];

const READ_ATTRIBUTES = new Set(['aria-label', 'title', 'placeholder', 'alt', 'label', 'loadingLabel']);
const LETTERS = /\p{L}/u;

function filesUnder(dir, keep) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(full, keep));
    else if (keep(entry.name)) out.push(full);
  }
  return out;
}

/** The argument names of a message ({code}, {minutes, plural, …}, <at>…</at>), sorted. */
function argumentsOf(message) {
  const names = new Set();
  const visit = (elements) => {
    for (const e of elements) {
      if (e.type === TYPE.argument || e.type === TYPE.number || e.type === TYPE.date || e.type === TYPE.time)
        names.add(e.value);
      if (e.type === TYPE.plural || e.type === TYPE.select) {
        names.add(e.value);
        for (const option of Object.values(e.options)) visit(option.value);
      }
      if (e.type === TYPE.tag) {
        names.add(`<${e.value}>`);
        visit(e.children);
      }
    }
  };
  visit(parseMessage(message));
  return [...names].sort().join(',');
}

export function checkCatalogs(base = root, catalogs = CATALOGS) {
  const problems = [];
  for (const catalog of catalogs) {
    const read = (locale) => JSON.parse(readFileSync(path.join(base, catalog.dir, `${locale}.json`), 'utf8'));
    const en = read('en');
    for (const locale of LOCALES) {
      const messages = read(locale);
      for (const key of Object.keys(en))
        if (!(key in messages)) problems.push(`${catalog.dir}/${locale}.json: missing key ${key}`);
      for (const [key, text] of Object.entries(messages)) {
        if (!(key in en)) {
          problems.push(`${catalog.dir}/${locale}.json: key ${key} is not in en.json`);
          continue;
        }
        try {
          const args = argumentsOf(text);
          const expected = argumentsOf(en[key]);
          if (args !== expected)
            problems.push(`${catalog.dir}/${locale}.json: ${key} has arguments {${args}}, English {${expected}}`);
        } catch (err) {
          problems.push(`${catalog.dir}/${locale}.json: ${key} does not parse (${err.message})`);
        }
      }
    }
    const sources = catalog.sources
      .flatMap((dir) => filesUnder(path.join(base, dir), (n) => /\.tsx?$/.test(n) && !n.endsWith('.test.ts')))
      .map((f) => readFileSync(f, 'utf8'))
      .join('\n');
    for (const key of Object.keys(en)) if (!isUsed(key, sources)) problems.push(`${catalog.dir}/en.json: unused key ${key}`);
  }
  return problems;
}

/** Named literally ('a.b.c'), or a literal start of it opens a template (`a.b.${x}`). */
function isUsed(key, sources) {
  if (sources.includes(`'${key}'`) || sources.includes(`"${key}"`) || sources.includes(`\`${key}\``)) return true;
  const parts = key.split('.');
  for (let i = parts.length - 1; i >= 1; i--) {
    const prefix = `\`${parts.slice(0, i).join('.')}.\${`;
    if (sources.includes(prefix)) return true;
  }
  return false;
}

/** Text a person reads, written in the file instead of taken from the catalog. */
export function checkConverted(base = root, files = CONVERTED) {
  const problems = [];
  for (const file of files) {
    const text = readFileSync(path.join(base, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
    const where = (node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const visit = (node) => {
      if (ts.isJsxText(node) && LETTERS.test(node.text)) problems.push(`${where(node)}: JSX text "${node.text.trim()}"`);
      if (ts.isJsxExpression(node) && node.expression && ts.isStringLiteralLike(node.expression) && LETTERS.test(node.expression.text))
        if (!ts.isJsxAttribute(node.parent) || READ_ATTRIBUTES.has(node.parent.name.getText()))
          problems.push(`${where(node)}: JSX string "${node.expression.text}"`);
      if (ts.isJsxAttribute(node) && READ_ATTRIBUTES.has(node.name.getText()) && node.initializer && ts.isStringLiteral(node.initializer) && LETTERS.test(node.initializer.text))
        problems.push(`${where(node)}: ${node.name.getText()}="${node.initializer.text}"`);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return problems;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const problems = [...checkCatalogs(), ...checkConverted()];
  for (const p of problems) console.error(p);
  if (problems.length) {
    console.error(`check:i18n: ${problems.length} problem(s) (docs/languages.md)`);
    process.exit(1);
  }
  console.log(`check:i18n: ${CATALOGS.length} catalogs in ${LOCALES.join(', ')}, ${CONVERTED.length} converted files: ok`);
}
