// Outgoing SMS behind one interface: console (development), file (tests, local runs), a generic
// http endpoint, or the Twilio and Africa's Talking REST APIs.
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { request } from 'undici';
import type { Config } from '../config.js';
import type { Clock } from '../shared/clock.js';
import { AppError } from '../shared/errors.js';
import { countSegments } from './segments.js';

export interface SmsSender {
  send(to: string, text: string): Promise<void>;
  /** Whether send() finishes locally at once (console, file) rather than waiting on a provider. */
  readonly local?: boolean;
}

export class ConsoleSmsSender implements SmsSender {
  readonly local = true;
  constructor(private readonly logger: Logger) {}
  async send(to: string, text: string): Promise<void> {
    // Printing the message is this transport's purpose (refused in production by config).
    this.logger.info({ sms: { to, text, ...countSegments(text) } }, `SMS to ${to}: ${text}`);
  }
}

export class FileSmsSender implements SmsSender {
  readonly local = true;
  private ready: Promise<unknown> | undefined;
  constructor(
    private readonly file: string,
    private readonly clock: Clock,
  ) {}
  async send(to: string, text: string): Promise<void> {
    this.ready ??= mkdir(path.dirname(this.file), { recursive: true });
    await this.ready;
    const { encoding, segments } = countSegments(text);
    await appendFile(
      this.file,
      `${JSON.stringify({ to, text, encoding, segments, sentAt: this.clock.now().toISOString() })}\n`,
    );
  }
}

export interface ProviderRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** A provider's answer that says the message was not taken; `retriable` for 429 and 5xx. */
class ProviderError extends Error {
  constructor(
    message: string,
    readonly retriable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export interface RetryPolicy {
  attempts: number;
  timeoutMs: number;
  /** Waits before the 2nd, 3rd, ... attempt (the provider's Retry-After wins, up to maxWaitMs). */
  backoffMs: number[];
  maxWaitMs: number;
}

// The code is sent while the client waits for its answer: three quick tries, not a long queue.
export const DEFAULT_SMS_RETRY: RetryPolicy = {
  attempts: 3,
  timeoutMs: 5_000,
  backoffMs: [250, 1_000],
  maxWaitMs: 2_000,
};

/**
 * A provider over HTTP: builds the request, reads the answer. Network errors, timeouts, 429 and 5xx
 * are retried; a 4xx is the provider refusing this message and is not.
 */
abstract class ProviderSmsSender implements SmsSender {
  abstract readonly provider: string;
  constructor(
    protected readonly logger: Logger,
    private readonly retry: RetryPolicy,
  ) {}

  protected abstract build(to: string, text: string): ProviderRequest;
  /** Throws a ProviderError when the answer says the message was not accepted. */
  protected abstract check(status: number, body: string, headers: Record<string, string | string[] | undefined>): void;

  async send(to: string, text: string): Promise<void> {
    const req = this.build(to, text);
    let lastError = '';
    for (let attempt = 1; attempt <= this.retry.attempts; attempt++) {
      let waitMs = this.retry.backoffMs[Math.min(attempt - 1, this.retry.backoffMs.length - 1)] ?? 0;
      try {
        const res = await request(req.url, {
          method: 'POST',
          headers: req.headers,
          body: req.body,
          headersTimeout: this.retry.timeoutMs,
          bodyTimeout: this.retry.timeoutMs,
        });
        const body = await res.body.text();
        this.check(res.statusCode, body, res.headers);
        return;
      } catch (err) {
        // The provider's words go to the log; the message text (it carries the code) never does.
        const retriable = err instanceof ProviderError ? err.retriable : true;
        lastError = (err as Error).message;
        if (err instanceof ProviderError && err.retryAfterMs !== undefined) waitMs = err.retryAfterMs;
        this.logger.warn({ provider: this.provider, to, attempt, err: lastError }, 'SMS provider refused or failed');
        if (!retriable || attempt === this.retry.attempts) break;
        await new Promise((resolve) => setTimeout(resolve, Math.min(waitMs, this.retry.maxWaitMs)));
      }
    }
    this.logger.error({ provider: this.provider, to, err: lastError }, 'SMS could not be sent');
    throw new AppError(502, 'SMS_FAILED', 'The SMS could not be sent; try again later');
  }

  protected httpFailure(
    status: number,
    detail: string,
    headers: Record<string, string | string[] | undefined>,
  ): ProviderError {
    const retriable = status === 429 || status >= 500;
    return new ProviderError(
      `${this.provider} answered ${status}${detail ? `: ${detail}` : ''}`,
      retriable,
      retryAfterMs(headers['retry-after']),
    );
  }
}

function retryAfterMs(value: string | string[] | undefined): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  if (/^\d+$/.test(raw)) return Number(raw) * 1000;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** Posts `{ to, text }` to SMS_HTTP_URL with SMS_HTTP_TOKEN as bearer; any 2xx is success. */
export class HttpSmsSender extends ProviderSmsSender {
  readonly provider = 'http';
  constructor(
    private readonly url: string,
    private readonly token: string | undefined,
    logger: Logger,
    retry: RetryPolicy = DEFAULT_SMS_RETRY,
  ) {
    super(logger, retry);
  }
  protected build(to: string, text: string): ProviderRequest {
    return {
      url: this.url,
      headers: { 'content-type': 'application/json', ...(this.token ? { authorization: `Bearer ${this.token}` } : {}) },
      body: JSON.stringify({ to, text }),
    };
  }
  protected check(status: number, _body: string, headers: Record<string, string | string[] | undefined>): void {
    if (status < 200 || status >= 300) throw this.httpFailure(status, '', headers);
  }
}

/** Twilio's Programmable Messaging: POST /2010-04-01/Accounts/{sid}/Messages.json, form-encoded, basic auth. */
export class TwilioSmsSender extends ProviderSmsSender {
  readonly provider = 'twilio';
  constructor(
    private readonly options: { accountSid: string; authToken: string; from: string; baseUrl: string },
    logger: Logger,
    retry: RetryPolicy = DEFAULT_SMS_RETRY,
  ) {
    super(logger, retry);
  }
  protected build(to: string, text: string): ProviderRequest {
    const { accountSid, authToken, from, baseUrl } = this.options;
    // A Messaging Service SID (MG…) goes in MessagingServiceSid, a number or sender id in From.
    const sender: Record<string, string> = from.startsWith('MG') ? { MessagingServiceSid: from } : { From: from };
    return {
      url: `${baseUrl.replace(/\/$/, '')}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`,
      },
      body: new URLSearchParams({ To: to, ...sender, Body: text }).toString(),
    };
  }
  protected check(status: number, body: string, headers: Record<string, string | string[] | undefined>): void {
    if (status >= 200 && status < 300) return;
    const error = parseJson(body) as { code?: number; message?: string } | undefined;
    const detail = error?.message ? `${error.message}${error.code ? ` (Twilio error ${error.code})` : ''}` : '';
    throw this.httpFailure(status, detail, headers);
  }
}

const AT_ACCEPTED = new Set([100, 101, 102]); // Processed, Sent, Queued

/** Africa's Talking: POST /version1/messaging, form-encoded, `apiKey` header; per-recipient status codes. */
export class AfricasTalkingSmsSender extends ProviderSmsSender {
  readonly provider = 'africastalking';
  constructor(
    private readonly options: { username: string; apiKey: string; from: string | undefined; baseUrl: string },
    logger: Logger,
    retry: RetryPolicy = DEFAULT_SMS_RETRY,
  ) {
    super(logger, retry);
  }
  protected build(to: string, text: string): ProviderRequest {
    const { username, apiKey, from, baseUrl } = this.options;
    const form = new URLSearchParams({ username, to, message: text });
    if (from) form.set('from', from);
    return {
      url: `${baseUrl.replace(/\/$/, '')}/version1/messaging`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', apiKey },
      body: form.toString(),
    };
  }
  protected check(status: number, body: string, headers: Record<string, string | string[] | undefined>): void {
    if (status < 200 || status >= 300) throw this.httpFailure(status, body.slice(0, 200), headers);
    const data = parseJson(body) as
      { SMSMessageData?: { Message?: string; Recipients?: { statusCode?: number; status?: string }[] } } | undefined;
    const recipient = data?.SMSMessageData?.Recipients?.[0];
    if (!recipient || !AT_ACCEPTED.has(Number(recipient.statusCode))) {
      const why = recipient
        ? `${recipient.status ?? 'refused'} (status ${recipient.statusCode})`
        : (data?.SMSMessageData?.Message ?? 'no recipient in the answer');
      // 500-502 per recipient are the gateway's own failures: worth another try.
      throw new ProviderError(`africastalking refused the message: ${why}`, Number(recipient?.statusCode) >= 500);
    }
  }
}

export function createSmsSender(config: Config, logger: Logger, clock: Clock): SmsSender {
  const sms = config.sms;
  switch (config.sms.transport) {
    case 'file':
      return new FileSmsSender(config.sms.file, clock);
    case 'http':
      return new HttpSmsSender(config.sms.httpUrl!, config.sms.httpToken, logger);
    case 'twilio':
      return new TwilioSmsSender(sms.twilio!, logger);
    case 'africastalking':
      return new AfricasTalkingSmsSender(sms.africasTalking!, logger);
    default:
      return new ConsoleSmsSender(logger);
  }
}
