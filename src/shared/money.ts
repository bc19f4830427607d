// Money as the API carries it, an integer in the currency's minor unit (contract sections 6, 18 and
// 21): ISO 4217's table of minor units, the one source of truth for where the point goes, and the
// formatting and parsing of amounts without floating point. Pure and without imports: the web apps get
// this file as it is (web/src/shared/money.ts, written by `npm run web:types`).

/**
 * ISO 4217 List One: each currency code with its "Minor unit" (the number of decimals of its major
 * unit). Written out rather than taken from Intl: ICU follows CLDR, which differs for 17 currencies
 * (AFN ALL COP HUF IDR IRR KPW LAK LBP MGA MMK PKR SLL SOS SYP YER 0, ISO 2; IQD 0, ISO 3).
 * The codes without a minor unit (precious metals, SDR, XSU, XUA, the test and "no currency" codes)
 * are left out: no country's money is counted in them.
 */
export const ISO_4217_MINOR_UNITS: Readonly<Record<string, number>> = Object.freeze({
  AED: 2,
  AFN: 2,
  ALL: 2,
  AMD: 2,
  ANG: 2,
  AOA: 2,
  ARS: 2,
  AUD: 2,
  AWG: 2,
  AZN: 2,
  BAM: 2,
  BBD: 2,
  BDT: 2,
  BGN: 2,
  BHD: 3,
  BIF: 0,
  BMD: 2,
  BND: 2,
  BOB: 2,
  BOV: 2,
  BRL: 2,
  BSD: 2,
  BTN: 2,
  BWP: 2,
  BYN: 2,
  BZD: 2,
  CAD: 2,
  CDF: 2,
  CHE: 2,
  CHF: 2,
  CHW: 2,
  CLF: 4,
  CLP: 0,
  CNY: 2,
  COP: 2,
  COU: 2,
  CRC: 2,
  CUC: 2,
  CUP: 2,
  CVE: 2,
  CZK: 2,
  DJF: 0,
  DKK: 2,
  DOP: 2,
  DZD: 2,
  EGP: 2,
  ERN: 2,
  ETB: 2,
  EUR: 2,
  FJD: 2,
  FKP: 2,
  GBP: 2,
  GEL: 2,
  GHS: 2,
  GIP: 2,
  GMD: 2,
  GNF: 0,
  GTQ: 2,
  GYD: 2,
  HKD: 2,
  HNL: 2,
  HTG: 2,
  HUF: 2,
  IDR: 2,
  ILS: 2,
  INR: 2,
  IQD: 3,
  IRR: 2,
  ISK: 0,
  JMD: 2,
  JOD: 3,
  JPY: 0,
  KES: 2,
  KGS: 2,
  KHR: 2,
  KMF: 0,
  KPW: 2,
  KRW: 0,
  KWD: 3,
  KYD: 2,
  KZT: 2,
  LAK: 2,
  LBP: 2,
  LKR: 2,
  LRD: 2,
  LSL: 2,
  LYD: 3,
  MAD: 2,
  MDL: 2,
  MGA: 2,
  MKD: 2,
  MMK: 2,
  MNT: 2,
  MOP: 2,
  MRU: 2,
  MUR: 2,
  MVR: 2,
  MWK: 2,
  MXN: 2,
  MXV: 2,
  MYR: 2,
  MZN: 2,
  NAD: 2,
  NGN: 2,
  NIO: 2,
  NOK: 2,
  NPR: 2,
  NZD: 2,
  OMR: 3,
  PAB: 2,
  PEN: 2,
  PGK: 2,
  PHP: 2,
  PKR: 2,
  PLN: 2,
  PYG: 0,
  QAR: 2,
  RON: 2,
  RSD: 2,
  RUB: 2,
  RWF: 0,
  SAR: 2,
  SBD: 2,
  SCR: 2,
  SDG: 2,
  SEK: 2,
  SGD: 2,
  SHP: 2,
  SLE: 2,
  SLL: 2,
  SOS: 2,
  SRD: 2,
  SSP: 2,
  STN: 2,
  SVC: 2,
  SYP: 2,
  SZL: 2,
  THB: 2,
  TJS: 2,
  TMT: 2,
  TND: 3,
  TOP: 2,
  TRY: 2,
  TTD: 2,
  TWD: 2,
  TZS: 2,
  UAH: 2,
  UGX: 0,
  USD: 2,
  USN: 2,
  UYI: 0,
  UYU: 2,
  UYW: 4,
  UZS: 2,
  VED: 2,
  VES: 2,
  VND: 0,
  VUV: 0,
  WST: 2,
  XAF: 0,
  XCD: 2,
  XCG: 2,
  XOF: 0,
  XPF: 0,
  YER: 2,
  ZAR: 2,
  ZMW: 2,
  ZWG: 2,
  ZWL: 2,
});

/** The currency's ISO 4217 minor units (KES 2, UGX 0, IQD 3); undefined for a code not in the table. */
export function minorUnitsOf(currency: string): number | undefined {
  return Object.prototype.hasOwnProperty.call(ISO_4217_MINOR_UNITS, currency)
    ? ISO_4217_MINOR_UNITS[currency]
    : undefined;
}

/**
 * The decimals to show for an amount in `currency`: its ISO 4217 minor units. A code the table does
 * not have (the service refuses such a country currency) falls back to 2, the most common.
 */
export const decimalsOf = (currency: string): number => minorUnitsOf(currency) ?? 2;

/** An integer amount in minor units as plain major units, digit by digit: 1234 with 2 → "12.34", -5 with 3 → "-0.005". */
export function toMajorText(amount: number, minorUnits: number): string {
  const sign = amount < 0 ? '-' : '';
  const digits = String(Math.abs(Math.trunc(amount)));
  if (minorUnits === 0) return sign + digits;
  const padded = digits.padStart(minorUnits + 1, '0');
  return `${sign}${padded.slice(0, -minorUnits)}.${padded.slice(-minorUnits)}`;
}

/** toMajorText with the currency's decimals: 7050 KES → "70.50" (a form's field, a bank file's column). */
export const majorText = (amount: number, currency: string): string => toMajorText(amount, decimalsOf(currency));

/**
 * Major units with the currency's decimals and English thousands separators, without the code:
 * -1234567 KES → "-12,345.67" (an invoice PDF's columns, whose header names the currency).
 */
export function formatAmount(amount: number, currency: string): string {
  return toMajorText(amount, decimalsOf(currency)).replace(/\d+/, (whole) =>
    whole.replace(/\B(?=(\d{3})+(?!\d))/g, ','),
  );
}

/**
 * "KES 174.30" from 17430: the currency's code and the amount with exactly its minor units'
 * decimals, grouped the English way. Intl gets the amount as a decimal string (exact: no division by
 * a power of ten in floating point) and fixed digits, so that its own (CLDR) digits do not apply.
 */
export function formatMoney(amount: number, currency: string, minorUnits = decimalsOf(currency)): string {
  const format = new Intl.NumberFormat('en', {
    style: 'currency',
    currency,
    currencyDisplay: 'code',
    minimumFractionDigits: minorUnits,
    maximumFractionDigits: minorUnits,
  });
  // A decimal string is formatted exactly (ECMA-402 since 2023); the lib types know only numbers.
  return format.format(toMajorText(amount, minorUnits) as unknown as number).replace(/\u00a0/g, ' ');
}

/**
 * What a person typed, in major units ("70.5", "1,234.50", "1 234,5", "KES 12,345.67": formatMoney's
 * own text too), as an integer in minor units, digit by digit; undefined when it is not a
 * non-negative amount with at most `minorUnits` decimals, or too large to be exact. With both "." and
 * "," the last one is the decimal point; a lone one is the point, except a "," before exactly three
 * digits where the currency has fewer decimals ("1,500" KES is 1500.00); the rest group thousands.
 */
export function parseMoney(text: string, minorUnits: number): number | undefined {
  const compact = text.replace(/[\s\u00a0\u202f']/g, '').replace(/^[A-Z]{3}|[A-Z]{3}$/gi, '');
  if (!/^\d[\d.,]*$/.test(compact)) return undefined;
  const dot = compact.lastIndexOf('.');
  const comma = compact.lastIndexOf(',');
  let point = -1;
  if (dot >= 0 && comma >= 0) point = Math.max(dot, comma);
  else if (dot >= 0 || comma >= 0) {
    const at = Math.max(dot, comma);
    const once = compact.indexOf(compact[at]) === at;
    const grouping = compact[at] === ',' && compact.length - at - 1 === 3 && minorUnits < 3;
    if (once && !grouping) point = at;
  }
  const whole = point >= 0 ? compact.slice(0, point) : compact;
  const fraction = point >= 0 ? compact.slice(point + 1) : '';
  if (!/^(?:\d+|\d{1,3}(?:[.,]\d{3})+)$/.test(whole) || !/^\d*$/.test(fraction) || fraction.length > minorUnits)
    return undefined;
  const minor = Number(whole.replace(/[.,]/g, '') + fraction.padEnd(minorUnits, '0'));
  return Number.isSafeInteger(minor) ? minor : undefined;
}

/** parseMoney with the currency's decimals: "50.5" KES → 5050, "0.29" IQD → 290; undefined when it is not an amount. */
export const parseAmount = (text: string, currency: string): number | undefined =>
  parseMoney(text, decimalsOf(currency));
