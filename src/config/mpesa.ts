// M-Pesa (contract section 26): on when MPESA_CONSUMER_KEY is set, and then its credentials are
// required; off otherwise (payouts are CSV files, section 21).
import type { EnvReader } from './env-reader.js';
import type { ServerConfig } from './server.js';

export interface MpesaConfig {
  consumerKey: string;
  consumerSecret: string;
  shortcode: string;
  passkey: string;
  b2cShortcode: string;
  initiatorName: string;
  securityCredential: string;
  /** Where Daraja sends callbacks: this service's public base URL (the /api/hooks/daraja/... routes go under it). */
  callbackBaseUrl: string;
  baseUrl: string;
  /** Whole shillings. */
  stkMin: number;
  stkMax: number;
  b2cMin: number;
  b2cMax: number;
  paymentTimeoutMs: number;
  /** An STK Push with no callback after this is asked about by STK Push Query (and again after as long). */
  stkQueryAfterMs: number;
  /** A B2C payment with no result after this is UNKNOWN and asked about by Transaction Status. */
  resultTimeoutMs: number;
  /** A Transaction Status with no answer after this is asked again. */
  statusTimeoutMs: number;
  requestTimeoutMs: number;
  /** Callbacks per token (the callback routes are outside the global per-IP limit). */
  callbackLimit: { max: number; windowMs: number } | null;
}

const REQUIRED = [
  'MPESA_CONSUMER_SECRET',
  'MPESA_SHORTCODE',
  'MPESA_PASSKEY',
  'MPESA_INITIATOR_NAME',
  'MPESA_SECURITY_CREDENTIAL',
  'MPESA_CALLBACK_BASE_URL',
];

export function readMpesa(r: EnvReader, { isProduction }: ServerConfig): MpesaConfig | undefined {
  // Durations first, so that durationSettings() lists them whether M-Pesa is on or not.
  const paymentTimeoutMs = r.duration('MPESA_PAYMENT_TIMEOUT', '10m', '1d');
  const stkQueryAfterMs = r.duration('MPESA_STK_QUERY_AFTER', '90s', '1h');
  const resultTimeoutMs = r.duration('MPESA_RESULT_TIMEOUT', '5m', '1d');
  const statusTimeoutMs = r.duration('MPESA_STATUS_TIMEOUT', '2m', '1d');
  const requestTimeoutMs = r.duration('MPESA_REQUEST_TIMEOUT', '10s', '2m');
  const limit = r.rateLimit('MPESA_CALLBACK_RATE_LIMIT', '20/1m', '1h');
  const consumerKey = r.get('MPESA_CONSUMER_KEY');
  if (consumerKey === undefined) return undefined;
  const missing = REQUIRED.filter((name) => r.get(name) === undefined);
  if (missing.length) r.problem(`${missing.join(', ')} required when MPESA_CONSUMER_KEY is set (contract section 26)`);
  const callbackBaseUrl = r.url('MPESA_CALLBACK_BASE_URL', isProduction ? ['https:'] : ['http:', 'https:']);
  if (isProduction && r.get('MPESA_CALLBACK_BASE_URL')?.startsWith('http:'))
    r.problem('MPESA_CALLBACK_BASE_URL must be https in production');
  const shortcode = r.str('MPESA_SHORTCODE', '');
  if (shortcode !== '' && !/^\d{5,7}$/.test(shortcode))
    r.problem(`MPESA_SHORTCODE must be 5 to 7 digits (got "${shortcode}")`);
  const stkMin = r.int('MPESA_STK_MIN_AMOUNT', 1, 1, 1_000_000);
  const stkMax = r.int('MPESA_STK_MAX_AMOUNT', 250_000, 1, 1_000_000);
  const b2cMin = r.int('MPESA_B2C_MIN_AMOUNT', 10, 1, 1_000_000);
  const b2cMax = r.int('MPESA_B2C_MAX_AMOUNT', 250_000, 1, 1_000_000);
  if (stkMin > stkMax) r.problem('MPESA_STK_MIN_AMOUNT must not be above MPESA_STK_MAX_AMOUNT');
  if (b2cMin > b2cMax) r.problem('MPESA_B2C_MIN_AMOUNT must not be above MPESA_B2C_MAX_AMOUNT');
  return {
    consumerKey,
    consumerSecret: r.str('MPESA_CONSUMER_SECRET', ''),
    shortcode,
    passkey: r.str('MPESA_PASSKEY', ''),
    b2cShortcode: r.str('MPESA_B2C_SHORTCODE', shortcode),
    initiatorName: r.str('MPESA_INITIATOR_NAME', ''),
    securityCredential: r.str('MPESA_SECURITY_CREDENTIAL', ''),
    callbackBaseUrl: (callbackBaseUrl ?? 'http://localhost').replace(/\/+$/, ''),
    baseUrl: (r.url('MPESA_BASE_URL', ['http:', 'https:']) ?? 'https://sandbox.safaricom.co.ke').replace(/\/+$/, ''),
    stkMin,
    stkMax,
    b2cMin,
    b2cMax,
    paymentTimeoutMs,
    stkQueryAfterMs,
    resultTimeoutMs,
    statusTimeoutMs,
    requestTimeoutMs,
    callbackLimit: limit ? { max: limit.max, windowMs: limit.windowMs } : null,
  };
}
