// Idempotency-Key (contract section 1): the key is claimed (a committed IN_FLIGHT row) first, and the
// response is stored in the work's own transaction, so "created" and "response stored" commit together.
// Job steps, offers' answers and tips open their transactions themselves: they get a RecordAnswer and
// store their answer in that transaction (IdempotencyStore.once) in one statement that checks the claim
// is still held and completes it. A driver's package step claims the key in its own one statement
// instead (RecordAnswer.inline, shared/record-answer.ts: the key and the step commit together, and the
// stored answer is the row the step returned, presented again on a replay).
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import type { DB } from '../db/database.js';
import type { Database } from '../db/schema.js';
import type { Clock } from '../shared/clock.js';
import { ClaimFirst, KEYED_ROW_PREFIX, type RecordAnswer } from '../shared/record-answer.js';
import { badRequest, conflict, unprocessable } from '../shared/errors.js';
import { IdempotencyRepository, type Claim } from './idempotency.repository.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
// An older unfinished claim (a crashed instance) may be taken over; a slow request's transaction holds
// the row locked (run), so a takeover waits and finds it DONE (or released). A step (once) locks the
// row only when it stores its answer: taken over before that, the slow step rolls back with 409.
export const ABANDONED_CLAIM_MS = 60_000;

export interface StoredResponse<B> {
  statusCode: number;
  body: B;
}

/** Sorted-key JSON, so that the same body with its keys in another order is the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What a key's record compares: the route (with its path's ids) and the body. */
export function requestHash(scope: string, body: unknown): string {
  return createHash('sha256')
    .update(`${scope}\n${canonicalJson(body)}`)
    .digest('hex');
}

export function idempotencyKeyFrom(headers: Record<string, string | string[] | undefined>): string | undefined {
  const raw = headers['idempotency-key'];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw.length < 1 || raw.length > 255) {
    throw badRequest('Idempotency-Key must be 1 to 255 characters', 'INVALID_IDEMPOTENCY_KEY');
  }
  return raw;
}

export class IdempotencyStore {
  private readonly key: Buffer;

  constructor(private readonly deps: { db: DB; repo: IdempotencyRepository; clock: Clock; secret: string }) {
    // Stored responses may carry a delivery code: they are kept encrypted at rest.
    this.key = createHash('sha256').update(`idempotency-response:${deps.secret}`).digest();
  }

  /** Runs `work` in a transaction; with a key, replays an identical request's response (422 another request, 409 in flight). */
  async run<B>(
    options: { accountId: string; key: string | undefined; scope: string; body: unknown },
    work: (trx: Transaction<Database>) => Promise<StoredResponse<B>>,
  ): Promise<StoredResponse<B> & { replayed: boolean }> {
    const { db } = this.deps;
    if (options.key === undefined) return { ...(await db.transaction().execute(work)), replayed: false };
    return this.claimed(options, async (claim) => {
      try {
        const result = await db.transaction().execute(async (trx) => {
          if (!(await this.deps.repo.lockClaim(trx, claim)))
            throw conflict('A request with this Idempotency-Key is still in progress', 'IDEMPOTENCY_KEY_IN_FLIGHT');
          const response = await work(trx);
          await this.deps.repo.complete(trx, claim, {
            status: response.statusCode,
            body: this.seal(JSON.stringify(response.body)),
          });
          return response;
        });
        return { ...result, replayed: false };
      } catch (err) {
        // A failed request stores nothing: the client may fix it and retry with the same key.
        await this.deps.repo.release(claim);
        throw err;
      }
    });
  }

  /**
   * `work` (a job step, an offer's answer, a tip: it opens its own transaction) once per key: it gets
   * a RecordAnswer to store its answer in that transaction. Work that stored nothing (one that needs no
   * transaction of its own) has its answer stored after it.
   */
  async once<B>(
    options: {
      accountId: string;
      key: string | undefined;
      scope: string;
      body: unknown;
      statusCode: number;
      /**
       * The work may claim the key in its own statement (RecordAnswer.inline); `render` presents the row
       * such a statement stored when the request is replayed.
       */
      inline?: { render(row: string): B };
    },
    work: (record: RecordAnswer | undefined) => Promise<B>,
  ): Promise<StoredResponse<B> & { replayed: boolean }> {
    const { statusCode } = options;
    if (options.key === undefined) return { statusCode, body: await work(undefined), replayed: false };
    if (options.inline) {
      const now = this.deps.clock.now();
      const inline = {
        accountId: options.accountId,
        key: options.key,
        requestHash: requestHash(options.scope, options.body),
        claimedAt: now,
        ...this.cutoffs(now),
        status: statusCode,
      };
      // Called only by work that took the usual path without saying so: its transaction rolls back.
      const record: RecordAnswer = Object.assign(
        async () => {
          throw new ClaimFirst();
        },
        { inline },
      );
      try {
        return { statusCode, body: await work(record), replayed: false };
      } catch (err) {
        if (!(err instanceof ClaimFirst)) throw err;
      }
    }
    const afterInline = options.inline !== undefined;
    return this.claimed(options, async (claim) => {
      let recorded = false;
      const complete = async (trx: Transaction<Database>, body: unknown) => {
        // Taken over (a claim older than ABANDONED_CLAIM_MS) or released meanwhile: this change rolls back.
        if (
          !(await this.deps.repo.completeHeld(trx, claim, {
            status: statusCode,
            body: this.seal(JSON.stringify(body ?? null)),
          }))
        ) {
          throw conflict('A request with this Idempotency-Key is still in progress', 'IDEMPOTENCY_KEY_IN_FLIGHT');
        }
        recorded = true;
      };
      const record: RecordAnswer = afterInline ? Object.assign(complete, { afterInline }) : complete;
      try {
        const body = await work(record);
        if (!recorded)
          await this.deps.repo.complete(this.deps.db, claim, {
            status: statusCode,
            body: this.seal(JSON.stringify(body ?? null)),
          });
        return { statusCode, body, replayed: false };
      } catch (err) {
        await this.deps.repo.release(claim);
        throw err;
      }
    });
  }

  /** Claims the key and runs `fresh`, or answers from the key's record: its response, 422 or 409. */
  private cutoffs(now: Date) {
    return {
      expiredBefore: new Date(now.getTime() - IDEMPOTENCY_TTL_MS),
      abandonedBefore: new Date(now.getTime() - ABANDONED_CLAIM_MS),
    };
  }

  private async claimed<B>(
    options: {
      accountId: string;
      key: string | undefined;
      scope: string;
      body: unknown;
      inline?: { render(row: string): B };
    },
    fresh: (claim: Claim) => Promise<StoredResponse<B> & { replayed: boolean }>,
  ): Promise<StoredResponse<B> & { replayed: boolean }> {
    const { accountId } = options;
    const key = options.key!;
    const hash = requestHash(options.scope, options.body);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const now = this.deps.clock.now();
      const claim = { accountId, key, claimedAt: now };
      if (await this.deps.repo.claim({ ...claim, requestHash: hash }, this.cutoffs(now))) return fresh(claim);

      const existing = await this.deps.repo.get(accountId, key);
      if (!existing) continue; // released between our insert and select: claim again
      if (existing.request_hash !== hash) {
        throw unprocessable('Idempotency-Key was already used with a different request', 'IDEMPOTENCY_KEY_REUSED');
      }
      if (existing.state === 'IN_FLIGHT' || existing.response_status === null || existing.response_body === null) {
        throw conflict('A request with this Idempotency-Key is still in progress', 'IDEMPOTENCY_KEY_IN_FLIGHT');
      }
      const stored = existing.response_body;
      // The row a step's own statement stored with its key, presented again as it was then.
      if (stored.startsWith(KEYED_ROW_PREFIX) && options.inline) {
        const body = options.inline.render(stored.slice(KEYED_ROW_PREFIX.length));
        return { statusCode: existing.response_status, body, replayed: true };
      }
      let body: B;
      try {
        body = JSON.parse(this.open(stored)) as B;
      } catch {
        // Sealed under another JWT_SECRET (rotated): replaying is impossible, re-running would duplicate.
        throw conflict(
          'The stored response of this Idempotency-Key can no longer be read; use a new key',
          'IDEMPOTENCY_KEY_UNREADABLE',
        );
      }
      return { statusCode: existing.response_status, body, replayed: true };
    }
    throw conflict('A request with this Idempotency-Key is still in progress', 'IDEMPOTENCY_KEY_IN_FLIGHT');
  }

  async purgeExpired(): Promise<number> {
    return this.deps.repo.deleteCreatedBefore(new Date(this.deps.clock.now().getTime() - IDEMPOTENCY_TTL_MS));
  }

  private seal(text: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
  }

  private open(sealed: string): string {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}

type KeyedRequest = Pick<FastifyRequest, 'auth' | 'headers' | 'log'> & { body: unknown };

/**
 * A POST that creates (a job, a settlement, a payout batch) in a transaction, once per
 * `Idempotency-Key` (a replay says `Idempotent-Replayed: true`); `keyRequired` refuses a request
 * without one. `announce` runs after the response is sent, never for a replay.
 */
export async function createOnce<Created>(
  idempotency: IdempotencyStore,
  request: KeyedRequest,
  reply: FastifyReply,
  scope: string,
  create: (trx: Transaction<Database>) => Promise<Created>,
  options: { announce?(created: Created): unknown; keyRequired?: boolean } = {},
): Promise<FastifyReply> {
  const key = idempotencyKeyFrom(request.headers);
  if (key === undefined && options.keyRequired) {
    throw badRequest(
      'This request needs an Idempotency-Key header: repeated without one, it would run twice',
      'IDEMPOTENCY_KEY_REQUIRED',
    );
  }
  const result = await idempotency.run(
    { accountId: request.auth.userId, key, scope, body: request.body },
    async (trx) => ({ statusCode: 201, body: await create(trx) }),
  );
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  else if (options.announce) {
    const { announce } = options;
    // After the response: up to 200 pushes (bus messages) need not delay the 201.
    setImmediate(() => {
      try {
        announce(result.body);
      } catch (err) {
        request.log.warn({ err }, 'nearby push failed');
      }
    });
  }
  return reply.code(result.statusCode).send(result.body);
}

/**
 * A job step, an offer's answer or a tip (`work` opens its own transaction and stores its answer in
 * it through the RecordAnswer), once per `Idempotency-Key`: `scope` names the route with its ids.
 * With `inline`, the work is first offered to claim the key in its own statement (RecordAnswer.inline).
 */
export async function stepOnce<B>(
  idempotency: IdempotencyStore,
  request: KeyedRequest,
  reply: FastifyReply,
  scope: string,
  statusCode: number,
  work: (record: RecordAnswer | undefined) => Promise<B>,
  inline?: { render(row: string): B },
): Promise<FastifyReply> {
  const options = {
    accountId: request.auth.userId,
    key: idempotencyKeyFrom(request.headers),
    scope,
    body: request.body ?? {},
    statusCode,
    inline,
  };
  const result = await idempotency.once(options, work);
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(result.statusCode).send(result.body);
}
