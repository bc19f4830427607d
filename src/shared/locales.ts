// The languages people read (contract section 27) and the rule that picks one. Pure and without
// imports: the web apps get this file as it is (web/src/shared/i18n/locales.ts, written by
// `npm run web:types`), so that the server and the browser choose alike.

export const LOCALES = ['en', 'sw', 'fr'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

export function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (LOCALES as readonly string[]).includes(value);
}

/** A BCP 47 tag's language as one of ours ('sw-KE' → 'sw', 'FR' → 'fr'); undefined for any other. */
export function localeOfTag(tag: string | null | undefined): Locale | undefined {
  if (!tag) return undefined;
  const language = tag.trim().split(/[-_]/)[0]!.toLowerCase();
  return isLocale(language) ? language : undefined;
}

/**
 * One source of the choice: a single tag, or a list in order of preference (a browser's
 * `navigator.languages`, an Accept-Language header's tags); null or undefined when it has none.
 */
export type LocaleSource = string | readonly string[] | null | undefined;

/**
 * The first source, in order, that names one of our languages; English when none does. Section 27's
 * orders: a person reading an app or a push is (their `locale`, the browser's languages, the
 * country's `defaultLocale`); an SMS to a package's recipient is (`dropoff.contactLocale`, the
 * creator's `locale`, the country's `defaultLocale`).
 */
export function chooseLocale(...sources: LocaleSource[]): Locale {
  for (const source of sources) {
    const tags = typeof source === 'string' ? [source] : (source ?? []);
    for (const tag of tags) {
      const locale = localeOfTag(tag);
      if (locale) return locale;
    }
  }
  return DEFAULT_LOCALE;
}
