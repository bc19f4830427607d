import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { neutralizeCsvText } from './csv-text.js';

const SEPARATORS = [',', ';', '\t', '\r', '\n'];
/** What a spreadsheet runs as a formula: = + - @ once it dropped the cell's leading whitespace. */
const FORMULA = /^\s*[=+\-@]/u;

/** The cells a spreadsheet would see if it split the text on these separators. */
function cellsOf(text: string, separators: string[]): string[] {
  let cells = [text];
  for (const s of separators) cells = cells.flatMap((c) => c.split(s));
  return cells;
}

/** Every way to split: on none, some or all of the separators. */
const SPLITS = Array.from({ length: 1 << SEPARATORS.length }, (_, mask) =>
  SEPARATORS.filter((_, i) => mask & (1 << i)),
);

/** Text made mostly of the characters that matter, so that the interesting cases come up often. */
const hostileText = fc.string({
  unit: fc.constantFrom('=', '+', '-', '@', '\t', '\r', '\n', ',', ';', ' ', '\u00a0', '\v', "'", '"', 'a', '1', '('),
  maxLength: 40,
});
const anyText = fc.oneof(
  hostileText,
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
);

test('the cases of the issue and the usual ones', () => {
  const cases: [string, string][] = [
    ['=1+1', "'=1+1"],
    [' =1+1', "' =1+1"],
    ['x;=1+1;y', "x;'=1+1;y"],
    ['x,=1+1,y', "x,'=1+1,y"],
    ['a,@SUM(A1:A9)', "a,'@SUM(A1:A9)"],
    ['x; -1', "x;' -1"],
    ['+254712345678', "'+254712345678"],
    ['-2+3', "'-2+3"],
    ['@user', "'@user"],
    ['\tabc', "'\tabc"],
    ['\r=1', "'\r'=1"],
    ['a\t=1', "a\t'=1"],
    ['line one\n=HYPERLINK("http://evil.example")', 'line one\n\'=HYPERLINK("http://evil.example")'],
    ['=HYPERLINK("http://evil.example","x")', '\'=HYPERLINK("http://evil.example","x")'],
    ['\u00a0=1', "'\u00a0=1"],
    ['ORD-1', 'ORD-1'],
    ['Flat 2, Block B; Moi Avenue', 'Flat 2, Block B; Moi Avenue'],
    ['a=b+c', 'a=b+c'],
    ["'=1", "'=1"],
    ['', ''],
    [' ', ' '],
  ];
  for (const [text, want] of cases) assert.equal(neutralizeCsvText(text), want, JSON.stringify(text));
});

test('no cell of any split starts a formula, and the cell itself never starts with = + - @ tab or CR', () => {
  fc.assert(
    fc.property(anyText, (text) => {
      const out = neutralizeCsvText(text);
      assert.doesNotMatch(out, /^\s*[=+\-@\t\r]/u);
      for (const split of SPLITS)
        for (const cell of cellsOf(out, split))
          assert.doesNotMatch(cell, FORMULA, `${JSON.stringify(out)} split on ${JSON.stringify(split)}`);
    }),
    { numRuns: 2000 },
  );
});

test('it only adds apostrophes, at most one per piece, and only where a formula could start', () => {
  fc.assert(
    fc.property(anyText, (text) => {
      const out = neutralizeCsvText(text);
      // Taking out the apostrophes it added gives the text back.
      let i = 0;
      let added = 0;
      for (let k = 0; k < out.length; k += 1) {
        const ch = out[k];
        if (text[i] === ch) i += 1;
        else {
          assert.equal(ch, "'");
          added += 1;
        }
      }
      assert.equal(i, text.length);
      assert.ok(added <= cellsOf(text, SEPARATORS).length + 1);
      if (!/[=+\-@\t\r]/.test(text)) assert.equal(out, text);
    }),
    { numRuns: 2000 },
  );
});

test('it is idempotent: neutralized text is left as it is', () => {
  fc.assert(
    fc.property(anyText, (text) => {
      const once = neutralizeCsvText(text);
      assert.equal(neutralizeCsvText(once), once);
    }),
    { numRuns: 2000 },
  );
});
