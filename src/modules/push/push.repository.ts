// SQL of the push module: the subscriptions, and whom a job's push goes to.
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { PushSubscriptionsTable } from '../../db/tables/push.js';

export type PushSubscriptionRow = PushSubscriptionsTable;

export class PushRepository {
  constructor(private readonly db: DB) {}

  /**
   * Saves the subscription for the user (the user's own endpoint again: its keys replaced). An
   * endpoint another account holds is left alone: undefined (contract 19, PUSH_ENDPOINT_TAKEN).
   */
  async upsert(ex: Executor, row: PushSubscriptionRow): Promise<PushSubscriptionRow | undefined> {
    return ex
      .insertInto('push_subscriptions')
      .values(row)
      .onConflict((oc) =>
        oc
          .column('endpoint')
          .doUpdateSet((eb) => ({
            p256dh: eb.ref('excluded.p256dh'),
            auth: eb.ref('excluded.auth'),
            created_at: eb.ref('excluded.created_at'),
            last_success_at: null,
          }))
          .whereRef('push_subscriptions.user_id', '=', 'excluded.user_id'),
      )
      .returning(['id', 'user_id', 'endpoint', 'p256dh', 'auth', 'created_at', 'last_success_at'])
      .executeTakeFirst();
  }

  /** Deletes the user's oldest subscriptions beyond `keep` (newest first by creation). */
  async trimUser(ex: Executor, userId: string, keep: number): Promise<number> {
    const keepIds = ex
      .selectFrom('push_subscriptions')
      .select('id')
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(keep);
    const result = await ex
      .deleteFrom('push_subscriptions')
      .where('user_id', '=', userId)
      .where('id', 'not in', keepIds)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Serializes a user's subscribe requests (the limit holds under concurrency). */
  async lockUser(ex: Executor, userId: string): Promise<void> {
    await ex.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirst();
  }

  async deleteOwned(userId: string, endpoint: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('push_subscriptions')
      .where('user_id', '=', userId)
      .where('endpoint', '=', endpoint)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async ofUser(userId: string): Promise<Pick<PushSubscriptionRow, 'id' | 'endpoint' | 'p256dh' | 'auth'>[]> {
    return this.db
      .selectFrom('push_subscriptions')
      .select(['id', 'endpoint', 'p256dh', 'auth'])
      .where('user_id', '=', userId)
      .orderBy('created_at', 'desc')
      .execute();
  }

  async countOfUser(userId: string): Promise<number> {
    const row = await this.db
      .selectFrom('push_subscriptions')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The push service said the subscription is gone (404/410). */
  async deleteById(id: string): Promise<void> {
    await this.db.deleteFrom('push_subscriptions').where('id', '=', id).execute();
  }

  async markSuccess(id: string, at: Date): Promise<void> {
    await this.db.updateTable('push_subscriptions').set({ last_success_at: at }).where('id', '=', id).execute();
  }
}
