// Free text in a CSV export, made safe to open in a spreadsheet (OWASP "CSV Injection"). Shared by
// every CSV the service writes; validated phone numbers and numbers are written as they are.

/** What a spreadsheet may split a cell on: the list separators of Excel and LibreOffice, and lines. */
const SEPARATOR = /([,;\t\r\n])/;
/** OWASP's dangerous first characters: = + - @ tab CR, after any leading whitespace. */
const FORMULA_CELL = /^\s*[=+\-@\t\r]/u;
/** A piece after a separator, once the spreadsheet dropped its leading whitespace (tabs and CRs are separators here). */
const FORMULA_PIECE = /^\s*[=+\-@]/u;

/**
 * Prefixes an apostrophe to the cell when it would start a formula, and to each piece after a
 * separator that would start one if the spreadsheet split the cell there (`x;=1+1` → `x;'=1+1`), so
 * that no cell of any split begins, after its whitespace, with = + - @. Adds apostrophes only;
 * idempotent; text without those characters is unchanged.
 */
export function neutralizeCsvText(text: string): string {
  const parts = text.split(SEPARATOR);
  let out = FORMULA_CELL.test(text) ? "'" : '';
  for (let i = 0; i < parts.length; i += 1) {
    const part = parts[i]!;
    // Odd indexes are the separators themselves; the first piece is covered by the cell's own check.
    out += i % 2 === 0 && i > 0 && FORMULA_PIECE.test(part) ? `'${part}` : part;
  }
  return out;
}
