// Web Push (contract sections 19 and 20): the subscriptions of signed-in users, and what is pushed to
// them: an offer to its driver (from dispatch, by the instance that made it), and a customer's job
// moving (from the job lifecycle, by the instance that moved it). Never in the way of either: the
// sender queues and returns at once.
import { createECDH, randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import type { DB } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import { formatMoney } from '../../shared/money.js';
import { formatClock, translate, type MessageKey } from '../../i18n/i18n.js';
import type { JobChangeWatcher } from '../jobs/lifecycle.js';
import { checkWebhookUrl, type LookupAll, type UrlRules } from '../webhooks/url-safety.js';
import type { PushRepository } from './push.repository.js';
import { MAX_SUBSCRIPTIONS_PER_USER, type SubscribeBody } from './push.schemas.js';
import type { PushOptions, PushSender } from './push-sender.js';

/** What an offer's push carries: enough for the notification, nothing secret (no contacts, no codes). */
export interface OfferForPush {
  id: string;
  jobType: 'PACKAGE' | 'RIDE';
  jobId: string;
  pickup: { location: { lat: number; lng: number }; address?: string };
  price: { amount: number; currency: string } | null;
  expiresAt: string;
}

/** The job statuses a customer hears of (contract section 20), and how urgently. */
const CUSTOMER_MOMENTS: Record<
  'PACKAGE' | 'RIDE',
  Record<string, { ttlSeconds: number; urgency: PushOptions['urgency'] }>
> = {
  RIDE: {
    ACCEPTED: { ttlSeconds: 600, urgency: 'high' },
    ARRIVED: { ttlSeconds: 600, urgency: 'high' },
    COMPLETED: { ttlSeconds: 3600, urgency: 'normal' },
  },
  PACKAGE: {
    ASSIGNED: { ttlSeconds: 600, urgency: 'normal' },
    DELIVERED: { ttlSeconds: 3600, urgency: 'normal' },
  },
};

const defaultLookup: LookupAll = (hostname) => lookup(hostname, { all: true, verbatim: true });

export const pushNotConfigured = () =>
  notFound('Push notifications are not configured on this server', 'PUSH_NOT_CONFIGURED');

export interface PushServiceDeps {
  db: DB;
  repo: PushRepository;
  clock: Clock;
  /** undefined: push is off (no VAPID keys). */
  sender: PushSender | undefined;
  publicKey: string | undefined;
  urlRules: UrlRules;
  lookupAll?: LookupAll;
}

export class PushService implements JobChangeWatcher {
  private readonly lookupAll: LookupAll;

  constructor(private readonly deps: PushServiceDeps) {
    this.lookupAll = deps.lookupAll ?? defaultLookup;
  }

  get enabled(): boolean {
    return this.deps.sender !== undefined;
  }

  vapidPublicKey(): { publicKey: string } {
    if (!this.deps.sender || !this.deps.publicKey) throw pushNotConfigured();
    return { publicKey: this.deps.publicKey };
  }

  async subscribe(userId: string, body: SubscribeBody): Promise<{ endpoint: string; createdAt: string }> {
    if (!this.deps.sender) throw pushNotConfigured();
    const problem = await checkWebhookUrl(body.endpoint, this.deps.urlRules, this.lookupAll);
    if (problem) throw badRequest(problem.replace(/^url/, 'endpoint'), 'INVALID_PUSH_ENDPOINT');
    const url = new URL(body.endpoint);
    if (url.search.length > 1024) throw badRequest('endpoint is too long', 'INVALID_PUSH_ENDPOINT');
    const p256dh = body.keys.p256dh.replace(/=+$/, '');
    const auth = body.keys.auth.replace(/=+$/, '');
    if (!isP256Point(p256dh))
      throw badRequest(
        'keys.p256dh must be an uncompressed P-256 public key (65 bytes, base64url)',
        'INVALID_PUSH_KEYS',
      );
    if (Buffer.from(auth, 'base64url').length !== 16)
      throw badRequest('keys.auth must be 16 bytes, base64url', 'INVALID_PUSH_KEYS');
    const now = this.deps.clock.now();
    const row = await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.repo.lockUser(trx, userId);
      const saved = await this.deps.repo.upsert(trx, {
        id: randomUUID(),
        user_id: userId,
        endpoint: body.endpoint,
        p256dh,
        auth,
        created_at: now,
        last_success_at: null,
      });
      // Another account's endpoint is not taken over (its owner would silently stop getting pushes).
      if (!saved) throw conflict('This push endpoint is registered to another account', 'PUSH_ENDPOINT_TAKEN');
      await this.deps.repo.trimUser(trx, userId, MAX_SUBSCRIPTIONS_PER_USER);
      return saved;
    });
    return { endpoint: row.endpoint, createdAt: new Date(row.created_at).toISOString() };
  }

  /** Only the caller's own subscription; anyone else's (or none) is a 404. */
  async unsubscribe(userId: string, endpoint: string): Promise<void> {
    if (!(await this.deps.repo.deleteOwned(userId, endpoint)))
      throw notFound('Push subscription not found', 'PUSH_SUBSCRIPTION_NOT_FOUND');
  }

  /** Sign-out (POST /auth/logout with pushEndpoint): the user's subscription with it, if any, is deleted. */
  async forget(userId: string, endpoint: string): Promise<void> {
    await this.deps.repo.deleteOwned(userId, endpoint);
  }

  /** An offer was made to a driver (contract section 19): pushed to each of its subscriptions until the offer's deadline. */
  offerMade(driverId: string, offer: OfferForPush): void {
    const sender = this.deps.sender;
    if (!sender) return;
    const ttlSeconds = (Date.parse(offer.expiresAt) - this.deps.clock.nowMs()) / 1000;
    if (ttlSeconds <= 0) return;
    const { lat, lng } = offer.pickup.location;
    const area = offer.pickup.address ?? `${lat.toFixed(4)}, ${lng.toFixed(4)}`;
    // Formatted here, with ISO 4217's decimals: the service worker shows it as it is (a phone's Intl
    // takes CLDR's digits, which differ for some currencies).
    const priceText = offer.price ? formatMoney(offer.price.amount, offer.price.currency) : undefined;
    sender.toUser(
      driverId,
      ({ locale }) => ({
        // Section 27: title and body in the driver's language.
        title: translate(locale, 'push.offer.title'),
        body: translate(locale, 'push.offer.body', {
          hasPrice: priceText ? 'yes' : 'no',
          area,
          price: priceText ?? '',
        }),
        type: 'offer',
        offerId: offer.id,
        jobType: offer.jobType,
        jobId: offer.jobId,
        deadline: offer.expiresAt,
        pickupArea: area,
        price: offer.price,
        ...(priceText ? { priceText } : {}),
      }),
      { ttlSeconds, urgency: 'high', kind: 'offer' },
    );
  }

  /** A job moved (after commit, on the instance that moved it): its customer hears of the moments of section 20. */
  /** The job's customer (the lifecycle passes it from the row it has just read): none, no push. */
  jobChanged(change: { jobType: 'PACKAGE' | 'RIDE'; jobId: string; status: string; customerId: string | null }): void {
    const sender = this.deps.sender;
    const moment = CUSTOMER_MOMENTS[change.jobType][change.status];
    const customerId = change.customerId;
    if (!sender || !moment || !customerId) return;
    sender.toUser(
      customerId,
      ({ locale }) => ({
        title: translate(locale, `push.job.${change.jobType}.title`),
        body: translate(locale, `push.job.${change.jobType}.${change.status}` as MessageKey),
        type: 'job',
        jobType: change.jobType,
        jobId: change.jobId,
        status: change.status,
      }),
      { ...moment, kind: 'job' },
    );
  }

  /** A ride booked ahead that nobody has accepted 10 minutes before its time (contract section 22): its customer hears of it. */
  rideUnaccepted(customerId: string, ride: { jobId: string; scheduledAt: string }): void {
    this.deps.sender?.toUser(
      customerId,
      ({ locale, timeZone }) => ({
        title: translate(locale, 'push.rideUnaccepted.title', {
          time: formatClock(new Date(ride.scheduledAt), locale, timeZone),
        }),
        body: translate(locale, 'push.rideUnaccepted.body'),
        type: 'job',
        jobType: 'RIDE',
        jobId: ride.jobId,
        status: 'REQUESTED',
        notice: 'NOT_ACCEPTED_YET',
        scheduledAt: ride.scheduledAt,
      }),
      { ttlSeconds: 600, urgency: 'high', kind: 'job' },
    );
  }

  /** Resolves when the pushes queued so far are sent (tests). */
  async idle(): Promise<void> {
    await this.deps.sender?.idle();
  }

  async close(): Promise<void> {
    await this.deps.sender?.close();
  }
}

/** Whether the base64url text is a valid uncompressed point of P-256 (the browser's ECDH key). */
function isP256Point(base64url: string): boolean {
  const bytes = Buffer.from(base64url, 'base64url');
  if (bytes.length !== 65 || bytes[0] !== 4) return false;
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(Buffer.alloc(32, 1));
    ecdh.computeSecret(bytes);
    return true;
  } catch {
    return false;
  }
}
