// Kysely queries of the Idempotency-Key records (http/idempotency.ts).
import type { ExpressionBuilder, Transaction } from 'kysely';
import type { DB } from '../db/database.js';
import type { Executor } from '../db/executor.js';
import type { Database } from '../db/schema.js';

/** One claim of a key, told apart from a later takeover by its claim time (a takeover is >= 60 s later). */
export interface Claim {
  accountId: string;
  key: string;
  claimedAt: Date;
}

const held = (claim: Claim) => (eb: ExpressionBuilder<Database, 'idempotency_keys'>) =>
  eb.and([
    eb('account_id', '=', claim.accountId),
    eb('key', '=', claim.key),
    eb('state', '=', 'IN_FLIGHT'),
    eb('created_at', '=', claim.claimedAt),
  ]);

export class IdempotencyRepository {
  constructor(private readonly db: DB) {}

  /**
   * Inserts an IN_FLIGHT claim, or takes over a record created before `expiredBefore` or an IN_FLIGHT
   * one created before `abandonedBefore`; whether this claim was written.
   */
  async claim(
    claim: Claim & { requestHash: string },
    cutoffs: { expiredBefore: Date; abandonedBefore: Date },
    db: Executor = this.db,
  ): Promise<boolean> {
    const row = {
      request_hash: claim.requestHash,
      state: 'IN_FLIGHT' as const,
      response_status: null,
      response_body: null,
      created_at: claim.claimedAt,
    };
    const claimed = await db
      .insertInto('idempotency_keys')
      .values({ account_id: claim.accountId, key: claim.key, ...row })
      .onConflict((oc) =>
        oc
          .columns(['account_id', 'key'])
          .doUpdateSet(row)
          .where((eb) =>
            eb.or([
              eb('idempotency_keys.created_at', '<', cutoffs.expiredBefore),
              eb.and([
                eb('idempotency_keys.state', '=', 'IN_FLIGHT'),
                eb('idempotency_keys.created_at', '<', cutoffs.abandonedBefore),
              ]),
            ]),
          ),
      )
      .returning('account_id')
      .executeTakeFirst();
    return claimed !== undefined;
  }

  /** Locks the claim while it is still held (not taken over, not released); whether it is. */
  async lockClaim(trx: Transaction<Database>, claim: Claim): Promise<boolean> {
    return (
      (await trx.selectFrom('idempotency_keys').select('state').where(held(claim)).forUpdate().executeTakeFirst()) !==
      undefined
    );
  }

  async complete(db: Executor, claim: Claim, response: { status: number; body: string }): Promise<void> {
    await db
      .updateTable('idempotency_keys')
      .where(held(claim))
      .set({ state: 'DONE', response_status: response.status, response_body: response.body })
      .execute();
  }

  /**
   * Stores the response of a claim still held, in the work's transaction: the row's lock and its
   * completion in one statement; false when the claim was taken over or released meanwhile.
   */
  async completeHeld(
    trx: Transaction<Database>,
    claim: Claim,
    response: { status: number; body: string },
  ): Promise<boolean> {
    const done = await trx
      .updateTable('idempotency_keys')
      .where(held(claim))
      .set({ state: 'DONE', response_status: response.status, response_body: response.body })
      .returning('account_id')
      .executeTakeFirst();
    return done !== undefined;
  }

  async release(claim: Claim): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where(held(claim)).execute();
  }

  get(accountId: string, key: string) {
    return this.db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'state', 'response_status', 'response_body'])
      .where('account_id', '=', accountId)
      .where('key', '=', key)
      .executeTakeFirst();
  }

  async deleteCreatedBefore(cutoff: Date): Promise<number> {
    const result = await this.db.deleteFrom('idempotency_keys').where('created_at', '<', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows ?? 0);
  }
}
