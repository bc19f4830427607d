// What follows a failed delivery (contract section 23): a re-attempt (a new PENDING package with
// previousAttemptId, the original's pickup unless another is given) or a return (a new package from
// the drop-off back to the pickup, returnOf set, priced by the tariff's returnRate), each created as
// any package is (its own tracking link, dispatch, webhook events), paid like the original, once per
// failed package. The driver who failed it after pickup still holds the parcel: offered it first.
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ParcelJson, ProofKind, StatusHistoryItemJson, StopJson } from '../../db/tables/jobs.js';
import { json } from '../../db/json.js';
import type { AuthContext } from '../../shared/auth-context.js';
import { conflict, forbidden } from '../../shared/errors.js';
import { returnPrice, type JobPrice, type JobPricing } from '../jobs/job-price.js';
import type { FollowUpOf, PackageCreation } from './package-creation.js';
import { canSee, packageNotFound, proofKinds } from './package-views.js';
import type { FollowUpsRepository } from './follow-ups.repository.js';
import type { CreatePackageBody, ReattemptBody } from './packages.schemas.js';

/** The statuses after which the failing driver still holds the parcel (the failure came after pickup). */
const HOLDING_STATUSES = ['PICKED_UP', 'IN_TRANSIT'];

/** The driver who failed the package while holding the parcel (its FAILED item came after pickup), else null. */
export function parcelHolder(row: { driver_id: string | null; status_history: StatusHistoryItemJson[] | string }) {
  const history = json<StatusHistoryItemJson[]>(row.status_history);
  let failedAt = history.length - 1;
  while (failedAt >= 0 && history[failedAt]!.status !== 'FAILED') failedAt -= 1;
  const before = failedAt > 0 ? history[failedAt - 1]!.status : undefined;
  return before !== undefined && HOLDING_STATUSES.includes(before) ? row.driver_id : null;
}

export interface PackageFollowUpsDeps {
  followUps: FollowUpsRepository;
  pricing: JobPricing;
  creation: PackageCreation;
}

type Original = NonNullable<Awaited<ReturnType<FollowUpsRepository['lockOriginal']>>>;

export class PackageFollowUps {
  constructor(private readonly deps: PackageFollowUpsDeps) {}

  reattempt(trx: Transaction<Database>, auth: AuthContext, id: string, body: ReattemptBody) {
    return this.followUp(trx, auth, id, 'REATTEMPT', (original) => ({
      body: {
        ...this.template(original),
        pickup: body.pickup ?? json<StopJson>(original.pickup),
        dropoff: json<StopJson>(original.dropoff),
        requireDeliveryCode: original.delivery_code_hash !== null,
        ...(original.cod_amount !== null ? { cashOnDelivery: { amount: original.cod_amount } } : {}),
        ...(body.pickupWindow ? { pickupWindow: body.pickupWindow } : {}),
        ...(body.dropoffWindow ? { dropoffWindow: body.dropoffWindow } : {}),
        ...(body.timeZone ? { timeZone: body.timeZone } : {}),
      },
      columns: { previous_attempt_id: original.id },
    }));
  }

  return(trx: Transaction<Database>, auth: AuthContext, id: string, body: ReattemptBody) {
    return this.followUp(trx, auth, id, 'RETURN', (original) => {
      if (original.return_of !== null)
        throw conflict('This package is a return already: it cannot be returned again', 'RETURN_OF_RETURN');
      const { vehicle_type: vehicleType, country_id: countryId } = original;
      return {
        body: {
          ...this.template(original),
          // The way back: from the drop-off (where the parcel could not be delivered) to the pickup.
          pickup: body.pickup ?? json<StopJson>(original.dropoff),
          dropoff: json<StopJson>(original.pickup),
          ...(body.pickupWindow ? { pickupWindow: body.pickupWindow } : {}),
          ...(body.dropoffWindow ? { dropoffWindow: body.dropoffWindow } : {}),
          ...(body.timeZone ? { timeZone: body.timeZone } : {}),
        },
        columns: { return_of: original.id },
        reprice: async (price: JobPrice, db: Transaction<Database>) =>
          returnPrice(price, await this.deps.pricing.returnRate(countryId, vehicleType, db)),
      };
    });
  }

  /** What a follow-up keeps of the original: the parcel, the vehicle, who pays and how, the proof asked for. */
  private template(original: Original): Omit<CreatePackageBody, 'pickup' | 'dropoff'> {
    const proof = proofKinds(original.proof_required as ProofKind[] | string);
    return {
      vehicleType: original.vehicle_type,
      countryId: original.country_id,
      ...(original.customer_id !== null && original.business_id !== null ? { customerId: original.customer_id } : {}),
      parcel: json<ParcelJson>(original.parcel),
      ...(original.reference !== null ? { reference: original.reference } : {}),
      paymentMethod: original.payment_method,
      // M-Pesa: the prompt goes to the phone that paid the original (section 26).
      ...(original.payment_method === 'MPESA' && original.payment_phone
        ? { payment: { phone: original.payment_phone } }
        : {}),
      notifyRecipient: original.notify_recipient,
      ...(proof.length ? { proofRequired: proof } : {}),
      ...(original.time_zone !== null ? { timeZone: original.time_zone } : {}),
    };
  }

  private async followUp(
    trx: Transaction<Database>,
    auth: AuthContext,
    id: string,
    kind: 'REATTEMPT' | 'RETURN',
    plan: (
      original: Original,
    ) => { body: CreatePackageBody; columns: Omit<FollowUpOf['columns'], 'preferred_driver_id'> } & Pick<
      FollowUpOf,
      'reprice'
    >,
  ) {
    const original = await this.deps.followUps.lockOriginal(trx, id);
    if (!original || !canSee({ ...original, driver_company_id: null }, auth)) throw packageNotFound();
    if (auth.role !== 'ADMIN' && auth.userId !== original.created_by)
      throw forbidden('Only its creator or an admin may re-attempt or return a package', 'ACTION_NOT_ALLOWED');
    const verb = kind === 'REATTEMPT' ? 're-attempted' : 'returned';
    if (original.status !== 'FAILED')
      throw conflict(`Package is ${original.status}: only a FAILED package can be ${verb}`, 'PACKAGE_NOT_FAILED');
    if (original.follow_up_id !== null)
      throw conflict(
        `This package was re-attempted or returned already (package ${original.follow_up_id})`,
        'ALREADY_FOLLOWED_UP',
      );
    const { body, columns, reprice } = plan(original);
    // The new package is the creator's, whoever asked: created, priced and paid as the creator's own.
    const creator: AuthContext = {
      userId: original.created_by,
      role: original.business_id !== null ? 'BUSINESS' : 'CUSTOMER',
      sessionId: auth.sessionId,
    };
    const created = await this.deps.creation.create(trx, creator, body, {
      actorId: auth.userId,
      columns: { ...columns, preferred_driver_id: parcelHolder(original) },
      reprice,
    });
    await this.deps.followUps.setFollowUp(trx, original.id, created.id);
    return created;
  }
}
