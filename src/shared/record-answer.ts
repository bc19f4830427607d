// A keyed request's answer (Idempotency-Key, http/idempotency.ts): a service that opens its own
// transaction calls it there with the body it answers, so that the change and the stored answer commit
// together.
//
// A step that changes its job in one statement may instead claim the key in that statement (issue 41):
// `inline` is then offered, the key not yet claimed. The statement inserts the key DONE with the row it
// returns (KEYED_ROW_PREFIX + the row as JSON; a replay presents it again) and fails as a whole when the
// key is already held; a step that cannot use the offer (its guard did not hold, another actor, a check
// the statement does not make) throws ClaimFirst before any write: the key is then claimed as usual and
// the work runs again with a RecordAnswer of the usual kind.
import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

/** A key to claim inside the step's own statement, with the stored answer. */
export interface InlineClaim {
  accountId: string;
  key: string;
  requestHash: string;
  claimedAt: Date;
  /** A record older than this (expired) or an IN_FLIGHT one older than `abandonedBefore` may be taken over. */
  expiredBefore: Date;
  abandonedBefore: Date;
  status: number;
}

export type RecordAnswer = ((trx: Transaction<Database>, body: unknown) => Promise<void>) & {
  inline?: InlineClaim;
  /** The work was offered `inline` and threw ClaimFirst: its one statement does not apply, skip it. */
  afterInline?: boolean;
};

/** What a stored answer written by a step's own statement starts with (a sealed answer is base64: never ':'). */
export const KEYED_ROW_PREFIX = 'row:';

/** Thrown by work that was offered an inline claim and did not use it; nothing was written. */
export class ClaimFirst extends Error {
  constructor() {
    super('claim the Idempotency-Key first');
  }
}
