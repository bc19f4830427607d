// What the service sends out: webhook deliveries (and the worker that makes them) and Web Push.
import type { EnvReader } from './env-reader.js';
import type { ServerConfig } from './server.js';

export interface WebhooksConfig {
  retryScheduleMs: number[];
  timeoutMs: number;
  allowHttp: boolean;
  allowPrivateTargets: boolean;
  signatureHeader: string;
  /** Whether the API process also runs the webhook worker (`npm run worker` runs it alone). */
  workerInProcess: boolean;
  /** Where `npm run worker` serves /health, /health/ready and /metrics. */
  workerPort: number;
}

/**
 * Web Push (contract section 19). vapid: the keys from the environment; undefined means "generate
 * and keep them in DATA_DIR" on the embedded default, and push off anywhere else.
 */
export interface PushConfig {
  vapid: { publicKey: string; privateKey: string; subject: string } | undefined;
  /** Used with generated keys (and by default): who the push services may contact. */
  subject: string;
  timeoutMs: number;
  concurrency: number;
  allowHttp: boolean;
  allowPrivateTargets: boolean;
}

export function readWebhooks(r: EnvReader, { isProduction }: ServerConfig): WebhooksConfig {
  const signatureHeader = r.str('WEBHOOK_SIGNATURE_HEADER', 'X-Service-Signature');
  if (!/^[A-Za-z0-9-]{1,100}$/.test(signatureHeader)) {
    r.problem('WEBHOOK_SIGNATURE_HEADER must be a header name (letters, digits and dashes)');
  }
  return {
    retryScheduleMs: r.durationList('WEBHOOK_RETRY_SCHEDULE', '5s,30s,2m,10m,30m,1h,3h,6h,12h,24h', '7d'),
    timeoutMs: r.duration('WEBHOOK_TIMEOUT', '10s', '5m'),
    allowHttp: r.bool('WEBHOOK_ALLOW_HTTP', !isProduction),
    allowPrivateTargets: r.bool('WEBHOOK_ALLOW_PRIVATE_TARGETS', !isProduction),
    signatureHeader,
    workerInProcess: r.bool('WEBHOOK_WORKER_IN_PROCESS', true),
    workerPort: r.int('WORKER_PORT', 9465, 0, 65535),
  };
}

/** Web Push (contract section 19): VAPID keys are base64url, the public one an uncompressed P-256 point. */
export function readPush(r: EnvReader, { isProduction }: ServerConfig): PushConfig {
  const publicKey = r.get('VAPID_PUBLIC_KEY');
  const privateKey = r.get('VAPID_PRIVATE_KEY');
  const subject = r.str('VAPID_SUBJECT', 'mailto:admin@localhost');
  if (!/^(mailto:[^\s@]+@[^\s@]+|https:\/\/[^\s]+)$/.test(subject))
    r.problem(`VAPID_SUBJECT must be a mailto: address or an https: URL (got "${subject}")`);
  let vapid: PushConfig['vapid'];
  if ((publicKey === undefined) !== (privateKey === undefined)) {
    r.problem('VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY must be set together');
  } else if (publicKey !== undefined && privateKey !== undefined) {
    const publicOk = base64urlBytes(publicKey) === 65 && Buffer.from(publicKey, 'base64url')[0] === 4;
    if (!publicOk)
      r.problem('VAPID_PUBLIC_KEY must be an uncompressed P-256 public key, base64url (65 bytes, 87 characters)');
    if (base64urlBytes(privateKey) !== 32)
      r.problem('VAPID_PRIVATE_KEY must be a P-256 private key, base64url (32 bytes, 43 characters)');
    vapid = { publicKey, privateKey, subject };
  }
  const allowHttp = r.bool('PUSH_ALLOW_HTTP', false);
  const allowPrivateTargets = r.bool('PUSH_ALLOW_PRIVATE_TARGETS', false);
  // Real push services are public https endpoints: these exist for tests and development only.
  if (isProduction && allowHttp) r.problem('PUSH_ALLOW_HTTP=true is refused in production');
  if (isProduction && allowPrivateTargets) r.problem('PUSH_ALLOW_PRIVATE_TARGETS=true is refused in production');
  return {
    vapid,
    subject,
    timeoutMs: r.duration('PUSH_TIMEOUT', '10s', '1m'),
    concurrency: r.int('PUSH_CONCURRENCY', 50, 1, 1000),
    allowHttp,
    allowPrivateTargets,
  };
}

/** The length in bytes of a base64url string without padding, or -1 when it is not one. */
function base64urlBytes(value: string): number {
  return /^[A-Za-z0-9_-]+$/.test(value) ? Buffer.from(value, 'base64url').length : -1;
}
