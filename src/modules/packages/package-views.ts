// Who sees what of a package: the caller's role and view, the response built from a row, the
// viewer-dependent money fields, the proof fields. Pure but for PackagePresenter (tracking links, pricing).
import type { ParcelJson, ProofKind, StopJson } from '../../db/tables/jobs.js';
import type { AuthContext } from '../../shared/auth-context.js';
import { notFound } from '../../shared/errors.js';
import { json } from '../../db/json.js';
import { cancellationFeeNow, money, storedPrice, viewerMoney, type JobPricing } from '../jobs/job-price.js';
import { isDriverSide, jobFields } from '../jobs/lifecycle.js';
import { jobEarnings, seesEarnings } from '../jobs/job-money.js';
import { windowView } from '../scheduling/windows.js';
import type { Sla, SlaFacts } from '../alerts/sla.js';
import { checkPackageTransition, type PackageActor } from './package-status.js';
import type { PackageRow } from './packages.repository.js';
import type { FullPackage, PackageResponse } from './packages.schemas.js';

export interface TrackingLinks {
  url(packageId: string, nonce: string): string;
  hashFor(packageId: string, nonce: string): string;
}

/** The columns the viewer-dependent fields (cash on delivery, earnings) are computed from: both reads have them. */
export type MoneyRow = Pick<
  PackageRow,
  | 'id'
  | 'status'
  | 'created_by'
  | 'driver_id'
  | 'driver_company_id'
  | 'payment_method'
  | 'commission_rate'
  | 'price_amount'
  | 'price_currency'
  | 'price_breakdown'
  | 'price_inputs'
  | 'cancellation_fee'
  | 'cod_amount'
  | 'cash_collected'
> & { tip_amount: number | null; tip_currency: string | null };
/** text[] as the driver returns it: an array (pg, PGlite), or the literal '{PHOTO,SIGNATURE}'. */
export function proofKinds(value: ProofKind[] | string): ProofKind[] {
  if (Array.isArray(value)) return value;
  return value
    .replace(/^\{|\}$/g, '')
    .split(',')
    .filter((kind): kind is ProofKind => kind === 'PHOTO' || kind === 'SIGNATURE');
}

/** The `proof` field: API paths to the images (served with the bearer header), never public links. */
export function proofOf(
  row: Pick<PackageRow, 'id' | 'proof_photo_key' | 'proof_signature_key' | 'proof_recipient_name' | 'proof_at'>,
): ProofJson | null {
  if (!row.proof_at) return null;
  return {
    ...(row.proof_photo_key ? { photoUrl: `/api/packages/${row.id}/proof/photo` } : {}),
    ...(row.proof_signature_key ? { signatureUrl: `/api/packages/${row.id}/proof/signature` } : {}),
    ...(row.proof_recipient_name !== null ? { recipientName: row.proof_recipient_name } : {}),
    at: row.proof_at.toISOString(),
  };
}

/** The proof a package requires that its driver has not sent yet. */
export function missingProof(
  row: Pick<PackageRow, 'proof_required' | 'proof_photo_key' | 'proof_signature_key'>,
): ProofKind[] {
  return proofKinds(row.proof_required).filter((kind) =>
    kind === 'PHOTO' ? !row.proof_photo_key : !row.proof_signature_key,
  );
}

type ProofJson = NonNullable<PackageResponse['proof']>;

export const packageNotFound = () => notFound('Package not found', 'PACKAGE_NOT_FOUND');

/**
 * How much of a package the caller sees (contract section 9): everything (its creator, the customer
 * it names, its driver, admins); everything but the tracking link (the company of its driver: it
 * follows the job through GET /packages/:id/track); or, for a company listing a PENDING package of its
 * country, only what deciding to take it needs.
 */
export type PackageView = 'FULL' | 'NO_LINK' | 'OPEN';

export function canSee(
  row: Pick<PackageRow, 'created_by' | 'customer_id' | 'driver_id' | 'driver_company_id'>,
  auth: AuthContext,
): boolean {
  if (auth.role === 'ADMIN' || auth.userId === row.created_by || auth.userId === row.customer_id) return true;
  return isDriverSide(row, auth);
}

export function actorFor(
  row: Pick<PackageRow, 'created_by' | 'customer_id' | 'driver_id'>,
  auth: AuthContext,
): PackageActor {
  if (auth.role === 'ADMIN') return 'ADMIN';
  if (auth.userId === row.driver_id) return 'ASSIGNED_DRIVER';
  if (auth.userId === row.created_by) return 'CREATOR';
  if (auth.userId === row.customer_id) return 'CUSTOMER';
  if (auth.role === 'COMPANY') return 'COMPANY';
  return 'DRIVER';
}

export function viewFor(row: Pick<PackageRow, 'driver_id' | 'driver_company_id'>, auth: AuthContext): PackageView {
  if (auth.role !== 'COMPANY') return 'FULL';
  return isDriverSide(row, auth) ? 'NO_LINK' : 'OPEN';
}

/** The package as `view` shows it; the open view is built from an allow-list, so a new field stays hidden. */
export function shown(body: FullPackage, view: PackageView): PackageResponse {
  if (view === 'FULL') return body;
  const { trackingUrl: _link, ...noLink } = body;
  if (view === 'NO_LINK') return noLink;
  const point = (stop: FullPackage['pickup']) => ({ location: stop.location, address: stop.address });
  return {
    id: body.id,
    status: body.status,
    orderType: body.orderType,
    vehicleType: body.vehicleType,
    countryId: body.countryId,
    businessId: body.businessId,
    pickup: point(body.pickup),
    dropoff: point(body.dropoff),
    parcel: body.parcel,
    driver: body.driver,
    statusHistory: body.statusHistory.map((h) => ({ status: h.status, at: h.at })),
    createdAt: body.createdAt,
    updatedAt: body.updatedAt,
    dispatch: body.dispatch,
    pickupWindow: body.pickupWindow,
    dropoffWindow: body.dropoffWindow,
    timeZone: body.timeZone,
    ...(body.sla !== undefined ? { sla: body.sla } : {}),
    price: body.price,
    cancellationFee: body.cancellationFee,
    // What delivering will need; the proof itself is for those who see the whole package.
    proofRequired: body.proofRequired,
    proof: null,
  };
}

/** A package paid by M-Pesa: its `payment` (section 26); null for the other methods. */
function paymentOf(row: PackageRow): FullPackage['payment'] {
  if (row.payment_method !== 'MPESA' || row.price_amount === null || row.price_currency === null) return null;
  return {
    method: 'MPESA',
    phone: row.payment_phone ?? '',
    state: row.payment_state ?? 'PENDING',
    ...(row.payment_receipt ? { receipt: row.payment_receipt } : {}),
    amount: row.price_amount,
    currency: row.price_currency,
    ...(row.payment_failure ? { failure: row.payment_failure } : {}),
  };
}

export function toResponse(row: PackageRow, trackingUrl: string): FullPackage {
  return {
    ...jobFields(row, 'PENDING'),
    orderType: 'PACKAGE_DELIVERY',
    businessId: row.business_id,
    customerId: row.customer_id,
    reference: row.reference,
    pickup: json<StopJson>(row.pickup),
    dropoff: json<StopJson>(row.dropoff),
    parcel: json<ParcelJson>(row.parcel),
    pickupWindow: windowView(row.pickup_window_start, row.pickup_window_end),
    dropoffWindow: windowView(row.dropoff_window_start, row.dropoff_window_end),
    timeZone: row.time_zone,
    price: money(row.price_amount, row.price_currency),
    cancellationFee: money(row.cancellation_fee, row.price_currency),
    paymentMethod: row.payment_method,
    payment: paymentOf(row),
    proofRequired: proofKinds(row.proof_required),
    proof: proofOf(row),
    trackingUrl,
    reasonCode: row.fail_reason_code,
    previousAttemptId: row.previous_attempt_id,
    returnOf: row.return_of,
    followUpId: row.follow_up_id,
  };
}

/**
 * The fields that depend on who reads (section 21): cash on delivery and what was collected (not to a
 * customer: the business, its driver's side and admins), earnings (the driver's side and admins only).
 * `tips` holds the package's tip when the caller sees earnings.
 */
export function moneyFields(row: MoneyRow, auth: AuthContext, tips: Map<string, number>) {
  const cod =
    auth.role === 'CUSTOMER'
      ? {}
      : {
          cashOnDelivery: money(row.cod_amount, row.price_currency),
          cashCollected: money(row.cash_collected, row.price_currency),
        };
  const earnings = seesEarnings(row, auth) ? jobEarnings(row, row.price_amount, tips.get(row.id) ?? 0) : null;
  return { ...cod, ...(earnings ? { earnings } : {}) };
}

/** The tips of the packages whose earnings this caller sees: the `tips` row each read joins (booked in its transaction with the ledger's entries). */
export function tipsFor(rows: MoneyRow[], auth: AuthContext): Map<string, number> {
  return new Map(
    rows.filter((r) => r.driver_id !== null && seesEarnings(r, auth)).map((r) => [r.id, r.tip_amount ?? 0]),
  );
}

const msOf = (value: Date | string | null | undefined) => (value ? new Date(value).getTime() : null);

/** What a package's `sla` is computed from (contract section 23): columns both reads of a package have. */
export function slaFacts(row: {
  status: string;
  vehicle_type: SlaFacts['vehicleType'];
  created_at: Date;
  pickup_window_start: Date | null;
  pickup_window_end: Date | null;
  dropoff_window_end: Date | null;
  pickup: { lat: number; lng: number };
  dropoff: { lat: number; lng: number };
  price_amount: number | null;
  price_currency: string | null;
  price_inputs: unknown;
  driver_id: string | null;
  driver_lat: number | null;
  driver_lng: number | null;
}): SlaFacts {
  const inputs = storedPrice(row)?.inputs;
  return {
    jobType: 'PACKAGE',
    status: row.status,
    vehicleType: row.vehicle_type,
    createdAtMs: msOf(row.created_at)!,
    pickupWindowStartMs: msOf(row.pickup_window_start),
    pickupWindowEndMs: msOf(row.pickup_window_end),
    dropoffWindowEndMs: msOf(row.dropoff_window_end),
    scheduledAtMs: null,
    durationSeconds: inputs?.durationSeconds ?? null,
    pickup: row.pickup,
    dropoff: row.dropoff,
    driverId: row.driver_id,
    driver:
      row.driver_id && row.driver_lat !== null && row.driver_lng !== null
        ? { lat: row.driver_lat, lng: row.driver_lng }
        : null,
  };
}

/** The `sla` of a job (alerts/): null when it is not active. */
export type SlaOf = (facts: SlaFacts) => Sla | null;

/** What needs the service's dependencies to show a package: its tracking link and the money of the moment. */
export class PackagePresenter {
  constructor(private readonly deps: { pricing: JobPricing; links: TrackingLinks; sla?: SlaOf }) {}

  /** The package as this caller sees it after an action of its own, with the viewer-dependent fields. */
  present(row: PackageRow, auth: AuthContext, view: PackageView = 'FULL'): PackageResponse {
    const body = { ...shown(this.respond(row), view), ...this.moneyFor(row, auth) };
    if (view === 'OPEN') return body;
    return { ...body, ...moneyFields(row, auth, tipsFor([row], auth)) };
  }

  /** The tip and cancellationFeeNow as this viewer may see them (contract section 20). */
  moneyFor(row: MoneyRow, auth: AuthContext) {
    return viewerMoney(
      { creatorId: row.created_by, driverId: row.driver_id, driverCompanyId: row.driver_company_id },
      auth,
      {
        tip: money(row.tip_amount, row.tip_currency),
        cancellationFeeNow: cancellationFeeNow(this.deps.pricing, row, {
          creatorMayCancel: checkPackageTransition(row.status, 'CANCELLED', 'CREATOR').ok,
          afterAssignment: row.status !== 'PENDING',
        }),
      },
    );
  }

  respond(row: PackageRow): FullPackage {
    const body = toResponse(row, this.deps.links.url(row.id, row.tracking_nonce));
    if (!this.deps.sla) return body;
    const sla = this.deps.sla(slaFacts({ ...row, pickup: body.pickup.location, dropoff: body.dropoff.location }));
    return { ...body, sla };
  }
}
