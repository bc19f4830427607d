// A keyed request's answer (Idempotency-Key, http/idempotency.ts): a service that opens its own
// transaction calls it there with the body it answers, so that the change and the stored answer commit
// together.
import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

export type RecordAnswer = (trx: Transaction<Database>, body: unknown) => Promise<void>;
