// The server's message catalogs (contract section 27): SMS, push texts and invoice PDFs, one ICU
// MessageFormat catalog per language (src/i18n/<locale>.json), formatted with FormatJS's
// intl-messageformat. English is complete and the reference; `npm run check:i18n` fails when Swahili
// or French lacks a key or a catalog holds one nothing uses (docs/languages.md).
import { IntlMessageFormat } from 'intl-messageformat';
import { DEFAULT_LOCALE, LOCALES, type Locale } from '../shared/locales.js';
import en from './en.json' with { type: 'json' };
import fr from './fr.json' with { type: 'json' };
import sw from './sw.json' with { type: 'json' };

export type MessageKey = keyof typeof en;
export type MessageValues = Record<string, string | number>;

export const CATALOGS: Record<Locale, Record<string, string>> = { en, sw, fr };

const compiled = new Map<string, IntlMessageFormat>();

/** The text of `key` in `locale` (English when that catalog lacks it, which the check forbids). */
export function translate(locale: Locale, key: MessageKey, values: MessageValues = {}): string {
  const id = `${locale}:${key}`;
  let format = compiled.get(id);
  if (!format) {
    const source = CATALOGS[locale][key] ?? CATALOGS[DEFAULT_LOCALE][key];
    format = new IntlMessageFormat(source, locale);
    compiled.set(id, format);
  }
  return String(format.format(values));
}

/** A translator bound to one locale. */
export function translator(locale: Locale) {
  return (key: MessageKey, values?: MessageValues) => translate(locale, key, values);
}

/** "14:05" in `timeZone` (24-hour digits in every language: glossary, Swahili times). */
export function formatClock(at: Date, locale: Locale, timeZone: string): string {
  return new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone }).format(at);
}

export { LOCALES };
