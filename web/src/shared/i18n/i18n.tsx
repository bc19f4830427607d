// The web apps' messages (contract section 27): one ICU MessageFormat catalog per language
// (web/src/shared/i18n/<locale>.json, through FormatJS's intl-messageformat), each its own chunk
// loaded when its language is chosen, so that a page carries one language only. The provider sets
// <html lang>; numbers, dates and times go through Intl in the locale (and the job's time zone).
import { IntlMessageFormat } from 'intl-messageformat';
import { createContext, Fragment, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { ApiError } from '../api/errors';
import { chooseLocale, type Locale } from './locales';

export type MessageKey = keyof typeof import('./en.json');
type Catalog = Record<MessageKey, string>;
type Values = Record<string, string | number>;
type RichValues = Record<string, string | number | ReactNode | ((chunks: ReactNode[]) => ReactNode)>;

const LOADERS: Record<Locale, () => Promise<{ default: Catalog }>> = {
  en: () => import('./en.json'),
  sw: () => import('./sw.json'),
  fr: () => import('./fr.json'),
};

/** Section 27 in the browser: the user's own locale, else the browser's languages, else the country's default. */
export function pickLocale(userLocale?: string | null, countryLocale?: string | null): Locale {
  const override = new URLSearchParams(window.location.search).get('lang');
  return chooseLocale(override, userLocale, navigator.languages, countryLocale);
}

export interface I18n {
  locale: Locale;
  t(key: MessageKey, values?: Values): string;
  /** A message with tags (`<time>{time}</time>`): each tag a function of its content. */
  rich(key: MessageKey, values: RichValues): ReactNode;
  number(value: number): string;
  /** Date and time in `timeZone` (the job's), 24-hour digits. */
  dateTime(iso: string | Date, options: Intl.DateTimeFormatOptions, timeZone?: string | null): string;
  /** The catalog's words for an error: per its `code`, the API's (English) message as a fallback. */
  errorText(error: unknown): string;
}

function createI18n(locale: Locale, catalog: Catalog): I18n {
  const formats = new Map<string, IntlMessageFormat>();
  const format = (key: MessageKey) => {
    let f = formats.get(key);
    if (!f) {
      f = new IntlMessageFormat(catalog[key] ?? key, locale);
      formats.set(key, f);
    }
    return f;
  };
  const i18n: I18n = {
    locale,
    t: (key, values) => String(format(key).format(values)),
    rich: (key, values) => {
      const parts = format(key).format<ReactNode>(values as never);
      return Array.isArray(parts) ? parts.map((p, i) => <Fragment key={i}>{p}</Fragment>) : parts;
    },
    number: (value) => new Intl.NumberFormat(locale).format(value),
    dateTime: (iso, options, timeZone) =>
      new Intl.DateTimeFormat(locale, { hourCycle: 'h23', ...options, timeZone: timeZone ?? undefined }).format(
        new Date(iso),
      ),
    errorText: (error) => {
      if (error instanceof ApiError) {
        const key = `error.${error.code}` as MessageKey;
        return error.code && key in catalog ? i18n.t(key) : error.message || i18n.t('error.generic');
      }
      if (error instanceof TypeError) return i18n.t('error.network');
      return i18n.t('error.generic');
    },
  };
  return i18n;
}

const I18nContext = createContext<I18n | undefined>(undefined);

export function useI18n(): I18n {
  const i18n = useContext(I18nContext);
  if (!i18n) throw new Error('useI18n outside an I18nProvider');
  return i18n;
}

/** Loads the locale's catalog, then renders its children with it; <html lang> follows. */
export function I18nProvider({ locale, children }: { locale: Locale; children: ReactNode }) {
  const [loaded, setLoaded] = useState<{ locale: Locale; catalog: Catalog }>();
  useEffect(() => {
    let live = true;
    void LOADERS[locale]().then((m) => live && setLoaded({ locale, catalog: m.default }));
    return () => {
      live = false;
    };
  }, [locale]);
  const i18n = useMemo(() => loaded && createI18n(loaded.locale, loaded.catalog), [loaded]);
  useEffect(() => {
    if (!i18n) return;
    document.documentElement.lang = i18n.locale;
    // Every language here is written left to right; the attribute is set so that one that is not only adds a catalog.
    document.documentElement.dir = 'ltr';
  }, [i18n]);
  // Nothing but a busy region until the words arrive: no English flashes before Swahili.
  if (!i18n) return <div aria-busy="true" />;
  return <I18nContext.Provider value={i18n}>{children}</I18nContext.Provider>;
}
