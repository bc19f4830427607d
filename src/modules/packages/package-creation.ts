// Creating a package: its checks, how it is paid and priced, its delivery code, and its announcement after commit.
import { createHmac, randomBytes, randomInt, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Transaction } from 'kysely';
import { isValidPhoneNumber } from 'libphonenumber-js/max';
import type { Database, VehicleType } from '../../db/schema.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, forbidden, notFound } from '../../shared/errors.js';
import { priceColumns, priceNewJob, type JobPrice, type JobPricing } from '../jobs/job-price.js';
import type { DispatchHooks } from '../jobs/lifecycle.js';
import { countryMoney, customerExists } from '../jobs/references.repository.js';
import type { SchedulingService } from '../scheduling/scheduling.service.js';
import { scheduledStart, validateWindows, type WindowRules } from '../scheduling/windows.js';
import { moneyFields, type PackagePresenter, type TrackingLinks } from './package-views.js';
import type { PackagesRepository } from './packages.repository.js';
import { accountPhone } from './package-payments.repository.js';
import type { JobPaymentsPort } from '../payments/payment-port.js';
import type { CreatePackageBody, FullPackage } from './packages.schemas.js';

/** Who the tracking SMS goes to and what chooses its language (section 27). */
export interface RecipientOfSms {
  phone: string;
  contactLocale?: string | null;
  creatorId: string;
  countryId: string;
}

export interface RecipientNotifier {
  notify(moment: 'CREATED' | 'IN_TRANSIT', to: RecipientOfSms, trackingUrl: string): void;
}

/** Delivery codes are kept as an HMAC, so a stolen database does not reveal codes by brute force alone. */
export class DeliveryCodes {
  private readonly codeKey: Buffer;

  constructor(secret: string) {
    this.codeKey = createHmac('sha256', secret).update('delivery-code').digest();
  }

  hash(packageId: string, code: string): string {
    return createHmac('sha256', this.codeKey).update(`${packageId}:${code}`).digest('hex');
  }
}

/** A package created from a failed one (contract section 23): a re-attempt or a return. */
export interface FollowUpOf {
  /** Who asked (the creator or an admin): the PENDING history row's actor. */
  actorId: string;
  columns: { previous_attempt_id?: string; return_of?: string; preferred_driver_id: string | null };
  /** The return's price from the tariff's price of the way back (its returnRate), in the creation's transaction. */
  reprice?: (price: JobPrice, trx: Transaction<Database>) => Promise<JobPrice>;
}

export interface PackageCreationDeps {
  repo: PackagesRepository;
  clock: Clock;
  pricing: JobPricing;
  links: TrackingLinks;
  dispatch?: DispatchHooks;
  notifier?: RecipientNotifier;
  codes: DeliveryCodes;
  presenter: PackagePresenter;
  /** Windows (contract section 22): their rules, and the wake-up of a scheduled package. */
  windows: WindowRules;
  scheduling?: Pick<SchedulingService, 'plan' | 'planned'>;
  /** M-Pesa collections (section 26), when configured. */
  payments?: JobPaymentsPort;
  /** Offers a new package to the drivers nearby (the lifecycle's offerNearby); returns how many. */
  offerNearby(job: {
    id: string;
    vehicleType: VehicleType;
    lat: number;
    lng: number;
    parcelSize: string | null;
  }): number;
}

export class PackageCreation {
  /** Packages created with notifyRecipient whose creation message waits for announce (after commit). */
  private readonly notifyOnAnnounce = new LRUCache<string, string>({ max: 10_000, ttl: 60_000 });
  /** Scheduled packages created here, and when they wake: announce leaves them out of dispatch until then. */
  private readonly dueOnAnnounce = new LRUCache<string, Date>({ max: 10_000, ttl: 60_000 });
  /** M-Pesa packages created here: announce sends their prompt instead of offering them (paid first). */
  private readonly payOnAnnounce = new LRUCache<string, true>({ max: 10_000, ttl: 60_000 });

  constructor(private readonly deps: PackageCreationDeps) {}

  async create(trx: Transaction<Database>, auth: AuthContext, body: CreatePackageBody, followUp?: FollowUpOf) {
    for (const [field, stop] of [
      ['pickup', body.pickup],
      ['dropoff', body.dropoff],
    ] as const) {
      if (!isValidPhoneNumber(stop.contactPhone))
        throw badRequest(`body.${field}.contactPhone must be a valid phone number`);
    }
    const windows = validateWindows(body, this.deps.clock.nowMs(), this.deps.windows);
    let customerId: string | null = body.customerId ?? null;
    if (auth.role === 'CUSTOMER') {
      if (customerId !== null && customerId !== auth.userId) {
        throw forbidden('A customer may only name itself as customerId', 'CUSTOMER_MISMATCH');
      }
      customerId = auth.userId;
    }
    const country = await countryMoney(trx, body.countryId);
    if (!country) throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
    const mpesa = body.paymentMethod === 'MPESA';
    if (body.payment !== undefined && !mpesa)
      throw badRequest('body.payment is for paymentMethod MPESA only', 'PAYMENT_METHOD_NOT_ALLOWED');
    if (mpesa) this.checkMpesa(auth, body, windows);
    const { paymentMethod, codAmount } = mpesa
      ? { paymentMethod: 'MPESA' as const, codAmount: null }
      : PackageCreation.payment(auth, body, country.cod_max);
    if (customerId !== null && auth.role !== 'CUSTOMER' && !(await customerExists(trx, customerId))) {
      throw notFound('Customer not found', 'CUSTOMER_NOT_FOUND');
    }

    const newPrice = await priceNewJob(this.deps.pricing, trx, {
      kind: 'PACKAGE',
      accountId: auth.userId,
      quoteId: body.quoteId,
      pickup: body.pickup.location,
      dropoff: body.dropoff.location,
      vehicleType: body.vehicleType,
      countryId: body.countryId,
    });
    const price = followUp?.reprice ? await followUp.reprice(newPrice, trx) : newPrice;

    // Paid by M-Pesa: whole shillings (the price rounded up is what is charged), a Kenyan payer.
    const paying = mpesa
      ? this.deps.payments!.check({
          amount: price.amount,
          currency: price.currency,
          phone: body.payment?.phone ?? (await accountPhone(trx, auth.userId)) ?? '',
        })
      : undefined;
    const commissionRate = await this.deps.pricing.commissionRate(body.countryId, body.vehicleType, trx);
    const id = randomUUID();
    const now = this.deps.clock.now();
    const trackingNonce = randomBytes(16).toString('base64url');
    const deliveryCode = body.requireDeliveryCode ? String(randomInt(0, 10_000)).padStart(4, '0') : undefined;
    await this.deps.repo.insert(trx, {
      ...priceColumns(price),
      ...(paying
        ? { price_amount: paying.amount, payment_phone: paying.phone, payment_state: 'PENDING' as const }
        : {}),
      id,
      status: 'PENDING',
      vehicle_type: body.vehicleType,
      country_id: body.countryId,
      created_by: auth.userId,
      business_id: auth.role === 'BUSINESS' ? auth.userId : null,
      customer_id: customerId,
      driver_id: null,
      reference: body.reference ?? null,
      pickup: JSON.stringify(body.pickup),
      dropoff: JSON.stringify(body.dropoff),
      parcel: JSON.stringify(body.parcel),
      pickup_lat: body.pickup.location.lat,
      pickup_lng: body.pickup.location.lng,
      delivery_code_hash: deliveryCode ? this.deps.codes.hash(id, deliveryCode) : null,
      recipient_name: null,
      tracking_nonce: trackingNonce,
      tracking_token_hash: this.deps.links.hashFor(id, trackingNonce),
      notify_recipient: body.notifyRecipient ?? false,
      payment_method: paymentMethod,
      commission_rate: commissionRate,
      cod_amount: codAmount,
      proof_required: `{${(body.proofRequired ?? []).join(',')}}`,
      created_at: now,
      updated_at: now,
      pickup_window_start: windows.pickupWindow?.start ?? null,
      pickup_window_end: windows.pickupWindow?.end ?? null,
      dropoff_window_start: windows.dropoffWindow?.start ?? null,
      dropoff_window_end: windows.dropoffWindow?.end ?? null,
      time_zone: windows.timeZone ?? country.time_zone,
      ...followUp?.columns,
    });
    // The creator, whose language the recipient's SMS falls back to.
    if (body.notifyRecipient) this.notifyOnAnnounce.set(id, auth.userId);
    await this.deps.repo.addHistory(trx, id, {
      status: 'PENDING',
      reason: null,
      actorId: followUp?.actorId ?? auth.userId,
      at: now,
    });
    if (paying) {
      // Not dispatchable until paid (PackagePayments.paid enrolls it): the prompt is sent after commit.
      await this.deps.payments!.open(trx, { jobType: 'PACKAGE', jobId: id, ...paying, at: now });
      this.payOnAnnounce.set(id, true);
    } else
      await this.deps.dispatch?.enroll(trx, {
        jobType: 'PACKAGE',
        jobId: id,
        vehicleType: body.vehicleType,
        ...body.pickup.location,
        at: now,
      });
    const start = paying ? undefined : scheduledStart(windows);
    if (start) {
      const planned = await this.deps.scheduling?.plan(trx, {
        jobType: 'PACKAGE',
        jobId: id,
        start,
        ...body.pickup.location,
        at: now,
      });
      if (planned) this.dueOnAnnounce.set(id, planned.dueAt);
    }
    const row = (await this.deps.repo.load(id, trx))!;
    return {
      ...this.deps.presenter.respond(row),
      ...this.deps.presenter.moneyFor(row, auth),
      ...moneyFields(row, auth, new Map()),
      ...(deliveryCode ? { deliveryCode } : {}),
    };
  }

  /**
   * How a new package is paid (section 21): a customer's is CASH only (no payment provider yet), a
   * business's ACCOUNT unless it asks for CASH; cash on delivery for a business only, 1 to the
   * country's codMax in its currency's minor unit.
   */
  static payment(auth: AuthContext, body: Pick<CreatePackageBody, 'paymentMethod' | 'cashOnDelivery'>, codMax: number) {
    if (auth.role === 'CUSTOMER') {
      if (body.paymentMethod !== undefined && body.paymentMethod !== 'CASH') {
        throw badRequest("A customer's job is paid in cash: paymentMethod must be CASH", 'PAYMENT_METHOD_NOT_ALLOWED');
      }
      if (body.cashOnDelivery !== undefined)
        throw badRequest('Cash on delivery is for business packages only', 'CASH_ON_DELIVERY_NOT_ALLOWED');
      return { paymentMethod: 'CASH' as const, codAmount: null };
    }
    const amount = body.cashOnDelivery?.amount;
    if (amount !== undefined && amount > codMax) {
      throw badRequest(
        `body.cashOnDelivery.amount must be at most ${codMax} (the country's codMax, in minor units)`,
        'CASH_ON_DELIVERY_TOO_LARGE',
      );
    }
    return { paymentMethod: body.paymentMethod ?? 'ACCOUNT', codAmount: amount ?? null };
  }

  /** Who may pay by M-Pesa (section 26): a customer's package, M-Pesa configured, not booked for later. */
  private checkMpesa(auth: AuthContext, body: CreatePackageBody, windows: Parameters<typeof scheduledStart>[0]) {
    if (auth.role !== 'CUSTOMER')
      throw badRequest(
        "M-Pesa is for customers' packages: paymentMethod must be ACCOUNT or CASH",
        'PAYMENT_METHOD_NOT_ALLOWED',
      );
    if (!this.deps.payments) throw badRequest('M-Pesa is not configured on this service', 'MPESA_DISABLED');
    if (body.cashOnDelivery !== undefined)
      throw badRequest('Cash on delivery is for business packages only', 'CASH_ON_DELIVERY_NOT_ALLOWED');
    if (scheduledStart(windows))
      throw badRequest(
        'A package booked for later cannot be paid by M-Pesa yet: pay in cash, or book it for now',
        'MPESA_SCHEDULED_UNAVAILABLE',
      );
  }

  announce(pkg: FullPackage): number {
    // Here, not in create: after commit, and not again for an idempotent replay.
    const creatorId = this.notifyOnAnnounce.get(pkg.id);
    if (creatorId && this.notifyOnAnnounce.delete(pkg.id)) {
      const { contactPhone: phone, contactLocale } = pkg.dropoff;
      this.deps.notifier?.notify(
        'CREATED',
        { phone, contactLocale, creatorId, countryId: pkg.countryId },
        pkg.trackingUrl,
      );
    }
    if (this.payOnAnnounce.delete(pkg.id)) {
      this.deps.payments?.afterCommit(pkg.id);
      return 0;
    }
    // An M-Pesa package replayed (Idempotency-Key) or not yet paid: never offered from here.
    if (pkg.paymentMethod === 'MPESA') return 0;
    const dueAt = this.dueOnAnnounce.get(pkg.id);
    if (dueAt) {
      // Scheduled: offered from start − lead (this instance's timer, or any instance's poll), not now.
      this.dueOnAnnounce.delete(pkg.id);
      this.deps.scheduling?.planned(dueAt);
      return 0;
    }
    const { lat, lng } = pkg.pickup.location;
    return this.deps.offerNearby({
      id: pkg.id,
      vehicleType: pkg.vehicleType,
      lat,
      lng,
      parcelSize: pkg.parcel.size ?? null,
    });
  }
}
