// Kysely for the packages a failed one leads to (contract section 23): the failed package read under
// lock in the follow-up's transaction, and its link to the re-attempt or return created from it.
import type { Executor } from '../../db/executor.js';

export class FollowUpsRepository {
  /**
   * The failed package's facts, its row locked until the caller's transaction ends: two follow-ups of
   * one package (a re-attempt and a return, or two of either) are decided one after the other.
   */
  lockOriginal(trx: Executor, id: string) {
    return trx
      .selectFrom('packages')
      .select([
        'id',
        'status',
        'created_by',
        'business_id',
        'customer_id',
        'driver_id',
        'vehicle_type',
        'country_id',
        'reference',
        'pickup',
        'dropoff',
        'parcel',
        'delivery_code_hash',
        'notify_recipient',
        'payment_method',
        'payment_phone',
        'cod_amount',
        'proof_required',
        'time_zone',
        'return_of',
        'follow_up_id',
        'status_history',
      ])
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
  }

  /** Links the failed package to the package created from it (once: the caller holds its lock and checked). */
  async setFollowUp(trx: Executor, id: string, followUpId: string): Promise<void> {
    await trx
      .updateTable('packages')
      .set({ follow_up_id: followUpId })
      .where('id', '=', id)
      .where('follow_up_id', 'is', null)
      .execute();
  }
}
