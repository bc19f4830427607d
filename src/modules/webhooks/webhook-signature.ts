// Webhook signing (pure): the interface description's hex HMAC and the Standard Webhooks scheme.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function generateSecret(random: (size: number) => Buffer = randomBytes): string {
  return SECRET_PREFIX + random(32).toString('base64');
}

/** X-Service-Signature: lowercase hex HMAC-SHA256 of the raw body, keyed with the UTF-8 bytes of the whole secret. */
export function signHex(secret: string, body: string | Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

/** The Standard Webhooks key: the base64-decoded part after `whsec_` (the whole string when there is no prefix). */
export function standardKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, 'base64');
}

/** webhook-signature: `v1,` + base64 HMAC-SHA256 of `id.timestamp.body`. */
export function signStandard(secret: string, id: string, timestampSeconds: number, body: string | Buffer): string {
  const mac = createHmac('sha256', standardKey(secret));
  mac.update(`${id}.${timestampSeconds}.`);
  mac.update(body);
  return `v1,${mac.digest('base64')}`;
}

export function verifyHex(secret: string, body: string | Buffer, received: string | undefined | null): boolean {
  if (typeof received !== 'string') return false;
  const expected = Buffer.from(signHex(secret, body), 'utf8');
  const given = Buffer.from(received.trim().toLowerCase(), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Verifies a Standard Webhooks `webhook-signature` header, with a timestamp tolerance as the reference libraries have. */
export function verifyStandard(
  secret: string,
  headers: { id: string | undefined; timestamp: string | undefined; signature: string | undefined },
  body: string | Buffer,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature || !/^\d+$/.test(timestamp)) return false;
  const ts = Number(timestamp);
  if (Math.abs(nowSeconds - ts) > toleranceSeconds) return false;
  const expected = Buffer.from(signStandard(secret, id, ts, body).slice(3), 'base64');
  for (const entry of signature.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
  }
  return false;
}

export interface SignedHeaders {
  [name: string]: string;
}

export function buildHeaders(options: {
  secret: string;
  signatureHeader: string;
  event: string;
  webhookId: string;
  timestampSeconds: number;
  body: string;
}): SignedHeaders {
  const { secret, signatureHeader, event, webhookId, timestampSeconds, body } = options;
  return {
    'content-type': 'application/json',
    [signatureHeader.toLowerCase()]: signHex(secret, body),
    [eventHeaderName(signatureHeader).toLowerCase()]: event,
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signStandard(secret, webhookId, timestampSeconds, body),
  };
}

/** `X-Service-Signature` → `X-Service-Event`; a name without "Signature" gets `-Event` appended. */
export function eventHeaderName(signatureHeader: string): string {
  return /signature/i.test(signatureHeader)
    ? signatureHeader.replace(/signature/i, 'Event')
    : `${signatureHeader}-Event`;
}
