// scripts/check-i18n.mjs: the project's catalogs pass, and each kind of fault is caught.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { checkCatalogs, checkConverted } from '../scripts/check-i18n.mjs';

const dir = mkdtempSync(path.join(tmpdir(), 'rd-i18n-check-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function fixture(catalogs: Record<string, Record<string, string>>, source: string) {
  rmSync(path.join(dir, 'c'), { recursive: true, force: true });
  mkdirSync(path.join(dir, 'c/src'), { recursive: true });
  for (const [locale, messages] of Object.entries(catalogs))
    writeFileSync(path.join(dir, 'c', `${locale}.json`), JSON.stringify(messages));
  writeFileSync(path.join(dir, 'c/src/page.tsx'), source);
  return checkCatalogs(dir, [{ name: 'fixture', dir: 'c', sources: ['c/src'] }]);
}

test("the project's catalogs and converted files pass", () => {
  assert.deepEqual(checkCatalogs(), []);
  assert.deepEqual(checkConverted(), []);
});

test('a key missing in sw, one only in fr, an unused key and arguments that differ are each reported', () => {
  const en = { 'a.title': 'Hello {name}', 'a.unused': 'Nobody', 'a.kind.ONE': 'One' };
  const problems = fixture(
    {
      en,
      sw: { 'a.title': 'Habari {name}', 'a.unused': 'Hakuna' },
      fr: { 'a.title': 'Bonjour {nom}', 'a.unused': 'Personne', 'a.kind.ONE': 'Un', 'a.extra': 'En trop' },
    },
    "t('a.title'); t(`a.kind.${kind}`);",
  );
  assert.deepEqual(problems.sort(), [
    'c/en.json: unused key a.unused',
    'c/fr.json: a.title has arguments {nom}, English {name}',
    'c/fr.json: key a.extra is not in en.json',
    'c/sw.json: missing key a.kind.ONE',
  ]);
});

test('English words in JSX text and in the attributes people read are reported; catalog calls are not', () => {
  mkdirSync(path.join(dir, 'v'), { recursive: true });
  writeFileSync(
    path.join(dir, 'v/page.tsx'),
    [
      'export const A = () => (',
      '  <main aria-label="Main area" className="x">',
      '    <h1>{t("page.title")}</h1>',
      '    <p>Loading…</p>',
      '    <img alt="A map" src="a.png" />',
      '    <input placeholder={"Your name"} />',
      '    <span title={t("page.hint")}>{count} · 42</span>',
      '  </main>',
      ');',
    ].join('\n'),
  );
  assert.deepEqual(checkConverted(dir, ['v/page.tsx']), [
    'v/page.tsx:2: aria-label="Main area"',
    'v/page.tsx:4: JSX text "Loading…"',
    'v/page.tsx:5: alt="A map"',
    'v/page.tsx:6: JSX string "Your name"',
  ]);
});
