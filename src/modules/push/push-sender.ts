// Sends Web Push messages (RFC 8030, payload encryption RFC 8291 aes128gcm, VAPID RFC 8292) to a
// user's subscriptions: fire-and-forget, at most PUSH_CONCURRENCY requests at once, each within
// PUSH_TIMEOUT, never to a private address unless allowed (checked again at connect time: a name
// may resolve elsewhere later). `web-push` (encryption and the VAPID JWT) is loaded on the first send.
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { Agent, request } from 'undici';
import type { Clock } from '../../shared/clock.js';
import { DEFAULT_LOCALE, type Locale } from '../../shared/locales.js';
import { guardedLookup } from '../webhooks/webhook-sender.js';
import { isPublicAddress } from '../webhooks/url-safety.js';
import type { PushRepository } from './push.repository.js';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
  subject: string;
}

export interface PushOptions {
  /** Seconds the push service keeps the message for an unreachable browser. */
  ttlSeconds: number;
  urgency: 'very-low' | 'low' | 'normal' | 'high';
  /** For the metric: what kind of message this is. */
  kind: 'offer' | 'job';
}

/** Pending sends beyond this are dropped (and counted): a push is worth little late. */
const MAX_QUEUED = 10_000;

/** The part of `web-push` used here (it ships no types). */
interface WebPushLib {
  encrypt(p256dh: string, auth: string, payload: string, contentEncoding: 'aes128gcm'): { cipherText: Buffer };
  getVapidHeaders(
    audience: string,
    subject: string,
    publicKey: string,
    privateKey: string,
    contentEncoding: 'aes128gcm',
    expiration: number,
  ): { Authorization: string };
}

/** A VAPID JWT is signed for 12 h (RFC 8292 allows up to 24 h) and used for 11: signing is half of a push's CPU time. */
const VAPID_JWT_SECONDS = 12 * 3600;
const VAPID_JWT_REUSE_SECONDS = 11 * 3600;

export interface PushSenderDeps {
  repo: PushRepository;
  clock: Clock;
  /**
   * Real time for the VAPID JWT (systemClock), not `clock`: web-push and the push service check its exp
   * against their own clocks, so a test's moved clock must not reach it.
   */
  wallClock: Clock;
  logger: Logger;
  registry: Registry;
  vapid: VapidKeys;
  timeoutMs: number;
  concurrency: number;
  allowPrivateTargets: boolean;
  /** The recipient's language and time zone, for the texts a payload carries (contract section 27). */
  readerOf?: (userId: string) => Promise<PushReader>;
}

export interface PushReader {
  locale: Locale;
  timeZone: string;
}

/** A payload, or one written for its reader (read only when the user has a subscription). */
export type PushMessage = Record<string, unknown> | ((reader: PushReader) => Record<string, unknown>);

type Subscription = { id: string; endpoint: string; p256dh: string; auth: string };

export class PushSender {
  private lib: Promise<WebPushLib> | undefined;
  /** Authorization header per push service origin (the JWT's audience), and until when it is used. */
  private readonly vapidHeaders = new Map<string, { header: string; untilSeconds: number }>();
  private agent: Agent | undefined;
  private running = 0;
  private readonly queue: (() => Promise<void>)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  private readonly sends: Counter<'kind' | 'outcome'>;

  constructor(private readonly deps: PushSenderDeps) {
    this.sends = new Counter({
      name: 'push_sends_total',
      help: 'Web Push messages by kind (offer, job) and outcome (sent; gone: 404/410, the subscription deleted; failed; dropped: the queue was full)',
      labelNames: ['kind', 'outcome'],
      registers: [deps.registry],
    });
  }

  /** Queues one message to every subscription of the user; returns at once. */
  toUser(userId: string, message: PushMessage, options: PushOptions): void {
    this.enqueue(options.kind, async () => {
      const subscriptions = await this.deps.repo.ofUser(userId);
      if (!subscriptions.length) return;
      const reader = (await this.deps.readerOf?.(userId)) ?? { locale: DEFAULT_LOCALE, timeZone: 'UTC' };
      const payload = JSON.stringify(typeof message === 'function' ? message(reader) : message);
      for (const s of subscriptions) this.enqueue(options.kind, () => this.send(s, payload, options));
    });
  }

  /** Resolves once nothing is queued or running (tests, shutdown). */
  idle(): Promise<void> {
    if (this.running === 0 && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.queue.length = 0;
    await this.idle();
    await this.agent?.close().catch(() => undefined);
  }

  private enqueue(kind: PushOptions['kind'], task: () => Promise<void>): void {
    if (this.queue.length >= MAX_QUEUED) {
      this.sends.inc({ kind, outcome: 'dropped' });
      return;
    }
    this.queue.push(task);
    this.pump();
  }

  private pump(): void {
    while (this.running < this.deps.concurrency && this.queue.length > 0) {
      const task = this.queue.shift()!;
      this.running += 1;
      task()
        .catch((err) =>
          this.deps.logger.warn(
            { err: { message: String((err as Error)?.message ?? err).slice(0, 200) } },
            'push failed',
          ),
        )
        .finally(() => {
          this.running -= 1;
          this.pump();
          if (this.running === 0 && this.queue.length === 0)
            for (const resolve of this.idleWaiters.splice(0)) resolve();
        });
    }
  }

  private webPush(): Promise<WebPushLib> {
    // A variable specifier: loaded on first use only, and typed by WebPushLib above.
    const name = 'web-push';
    this.lib ??= import(name).then((m: { default?: WebPushLib } & WebPushLib) => m.default ?? m);
    return this.lib;
  }

  private vapidHeader(lib: WebPushLib, audience: string): string {
    const nowSeconds = Math.floor(this.deps.wallClock.nowMs() / 1000);
    const cached = this.vapidHeaders.get(audience);
    if (cached && nowSeconds < cached.untilSeconds) return cached.header;
    const { publicKey, privateKey, subject } = this.deps.vapid;
    const header = lib.getVapidHeaders(
      audience,
      subject,
      publicKey,
      privateKey,
      'aes128gcm',
      nowSeconds + VAPID_JWT_SECONDS,
    ).Authorization;
    if (this.vapidHeaders.size > 1000) this.vapidHeaders.clear();
    this.vapidHeaders.set(audience, { header, untilSeconds: nowSeconds + VAPID_JWT_REUSE_SECONDS });
    return header;
  }

  private dispatcher(): Agent {
    this.agent ??= new Agent({
      connections: 16,
      headersTimeout: this.deps.timeoutMs,
      bodyTimeout: this.deps.timeoutMs,
      connect: {
        timeout: this.deps.timeoutMs,
        ...(this.deps.allowPrivateTargets ? {} : { lookup: guardedLookup as never }),
      },
    });
    return this.agent;
  }

  private async send(subscription: Subscription, payload: string, options: PushOptions): Promise<void> {
    const { logger, repo, clock } = this.deps;
    const url = new URL(subscription.endpoint);
    // The endpoint's path is the subscription's capability: logs name only its host.
    const where = { subscriptionId: subscription.id, host: url.host };
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    if (!this.deps.allowPrivateTargets && isIP(host) && !isPublicAddress(host)) {
      this.sends.inc({ kind: options.kind, outcome: 'failed' });
      logger.warn(where, 'push refused: the endpoint is a private address');
      return;
    }
    const lib = await this.webPush();
    let status: number;
    try {
      const body = lib.encrypt(subscription.p256dh, subscription.auth, payload, 'aes128gcm').cipherText;
      const response = await request(subscription.endpoint, {
        method: 'POST',
        headers: {
          TTL: String(Math.max(0, Math.floor(options.ttlSeconds))),
          Urgency: options.urgency,
          'Content-Encoding': 'aes128gcm',
          'Content-Type': 'application/octet-stream',
          Authorization: this.vapidHeader(lib, url.origin),
        },
        body,
        dispatcher: this.dispatcher(),
        maxRedirections: 0,
        signal: AbortSignal.timeout(this.deps.timeoutMs),
      });
      status = response.statusCode;
      await response.body.dump().catch(() => undefined);
    } catch (err) {
      this.sends.inc({ kind: options.kind, outcome: 'failed' });
      logger.warn({ ...where, error: describe(err, subscription.endpoint) }, 'push failed');
      return;
    }
    if (status >= 200 && status < 300) {
      this.sends.inc({ kind: options.kind, outcome: 'sent' });
      await repo.markSuccess(subscription.id, clock.now());
    } else if (status === 404 || status === 410) {
      // RFC 8030 section 7.3: the subscription has expired or been removed.
      this.sends.inc({ kind: options.kind, outcome: 'gone' });
      await repo.deleteById(subscription.id);
    } else {
      this.sends.inc({ kind: options.kind, outcome: 'failed' });
      logger.warn({ ...where, status }, 'push refused by the push service');
    }
  }
}

/** A network error's code and message, with the endpoint (whose path is a secret) taken out. */
function describe(err: unknown, endpoint: string): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_CONNECT_TIMEOUT')
    return 'timed out';
  const code = e.code ?? e.cause?.code;
  const message = (e.message ?? String(err)).split(endpoint).join('<endpoint>').slice(0, 200);
  return code ? `${code}: ${message}` : message;
}
