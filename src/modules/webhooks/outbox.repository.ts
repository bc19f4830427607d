// Kysely queries of the webhook outbox: rows written in a job's status transaction, claimed, sent and
// completed by the delivery worker (webhook-worker.ts).
import { runPrepared } from '../../db/prepared.js';
import { sql, type QueryCreator, type Transaction } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { Database } from '../../db/schema.js';

/** A delivery claimed for one attempt, with its endpoint's url and secret. */
export interface ClaimedRow {
  id: string;
  endpoint_id: string;
  event: string;
  payload: string;
  attempts: number;
  attempt_base: number;
  url: string;
  secret: string;
}

/** An attempt's outcome, as written (timestamps as ISO text: they travel as a text[] parameter). */
export interface Completion {
  id: string;
  attempts: number;
  status: 'SUCCEEDED' | 'PENDING' | 'FAILED';
  next: string | null;
  code: number | null;
  error: string | null;
  completed: string | null;
}

/** The rows of one event: its name, the package (delivery_id), the body, when it happened. */
export interface OutboxEvent {
  event: string;
  deliveryId: string;
  payload: string;
  occurredAt: Date;
}

/**
 * One row per enabled endpoint of the changed job's business (`moved`: the job's row as its status
 * change's CTE returned it) subscribed to the event: the outbox write as a CTE of the status change,
 * so that the event exists exactly when the change does, in the change's one statement.
 */
export function insertForMovedJob(
  db: QueryCreator<Database & { moved: { business_id: string | null } }>,
  row: OutboxEvent,
) {
  return db
    .insertInto('webhook_deliveries')
    .columns(['id', 'endpoint_id', 'event', 'delivery_id', 'payload', 'status', 'next_attempt_at', 'created_at'])
    .expression(
      sql`select gen_random_uuid(), e.id, ${row.event}::text, ${row.deliveryId}::text, ${row.payload}::text, 'PENDING',
      ${row.occurredAt}::timestamptz, ${row.occurredAt}::timestamptz
    from webhook_endpoints e join moved m on e.business_id = m.business_id
    where e.enabled and ${row.event}::text = any(e.events)
    order by e.created_at, e.id`,
    );
}

export class OutboxRepository {
  constructor(private readonly db: DB) {}

  /**
   * One row per enabled endpoint of the business subscribed to the event at this moment, due at once
   * (next_attempt_at = the change).
   */
  async insertForSubscribers(db: Executor, row: OutboxEvent & { businessId: string }): Promise<void> {
    const query = sql`
    insert into webhook_deliveries (id, endpoint_id, event, delivery_id, payload, status, next_attempt_at, created_at)
    select gen_random_uuid(), e.id, ${row.event}::text, ${row.deliveryId}::text, ${row.payload}::text, 'PENDING',
      ${row.occurredAt}::timestamptz, ${row.occurredAt}::timestamptz
    from webhook_endpoints e
    where e.business_id = ${row.businessId}::uuid and e.enabled and ${row.event}::text = any(e.events)
    order by e.created_at, e.id
  `;
    await runPrepared(db, query.compile(db));
  }

  /**
   * One statement: for each enabled endpoint, its oldest due rows whose earlier events for the same
   * package are done, at most the worker's free slots for that endpoint (`perEndpoint` less its
   * `busy` count, so a slow endpoint's backlog never fills a claim), locked with SKIP LOCKED so
   * concurrent workers never take the same row, and leased to `workerId` until `lease`. A row another
   * worker leased after this statement's snapshot is re-checked on its newest version when it is
   * locked (and skipped), not taken twice. The lock sits under the per-endpoint LIMIT, so skipped rows
   * do not use up an endpoint's share; rows locked there but cut by the overall limit are not leased
   * and are free again at commit.
   *
   * Two planner traps, both measured with EXPLAIN ANALYZE on a 20k backlog:
   * - JIT: the per-endpoint LIMIT is not a constant, so the planner guesses 10 % of the queue per
   *   endpoint and the cost passes jit_above_cost; compiling then took ~20 ms of a ~1 ms statement.
   *   `jit = off` for this transaction only (hence a transaction of its own).
   * - The order check must probe the order index by package. With an equality on endpoint_id the
   *   planner may (without statistics, e.g. right after a burst into a new table) probe the due index
   *   by endpoint instead and read the endpoint's whole queue for every candidate (~60 ms);
   *   `is not distinct from` (same meaning, the column is not null) is not an index condition, so
   *   only the order index fits.
   */
  claimDue(c: {
    now: Date;
    lease: Date;
    workerId: string;
    busyIds: string[];
    busyCounts: number[];
    perEndpoint: number;
    limit: number;
  }): Promise<ClaimedRow[]> {
    return this.db.transaction().execute(async (trx) => {
      await sql`set local jit = off`.execute(trx);
      const result = await sql<ClaimedRow>`
        with busy as (
          select f.id, f.n from unnest(${c.busyIds}::uuid[], ${c.busyCounts}::int[]) as f(id, n)
        ),
        claimed as (
          select x.id
          from webhook_endpoints e
          left join busy on busy.id = e.id
          cross join lateral (
            select p.id, p.next_attempt_at, p.seq
            from webhook_deliveries p
            where p.endpoint_id = e.id and p.status = 'PENDING'
              and p.next_attempt_at <= ${c.now}::timestamptz
              and (p.locked_until is null or p.locked_until <= ${c.now}::timestamptz)
              and not exists (
                select 1 from webhook_deliveries q
                where q.delivery_id = p.delivery_id and q.endpoint_id is not distinct from p.endpoint_id
                  and q.status = 'PENDING' and q.seq < p.seq
              )
            order by p.next_attempt_at, p.seq
            limit greatest(0, ${c.perEndpoint}::int - coalesce(busy.n, 0))
            for update of p skip locked
          ) x
          where e.enabled
          order by x.next_attempt_at, x.seq
          limit ${c.limit}::int
        )
        update webhook_deliveries d
        set attempts = d.attempts + 1, locked_until = ${c.lease}::timestamptz, locked_by = ${c.workerId}::text,
            last_attempt_at = ${c.now}::timestamptz
        from webhook_endpoints e
        where d.id = any(array(select id from claimed)) and e.id = d.endpoint_id
        returning d.id, d.endpoint_id, d.event, d.payload, d.attempts, d.attempt_base, e.url, e.secret
      `.execute(trx);
      return result.rows;
    });
  }

  /**
   * Writes outcomes in one UPDATE. Only the claim `workerId` still holds is updated: a row whose lease
   * ran out and was taken by another worker is left to that worker. `d.id = any(...)` makes the
   * planner use the primary key (it guesses 100 rows for unnest and would otherwise scan the whole table).
   */
  async complete(db: Executor, workerId: string, c: Completion[]): Promise<void> {
    await sql`
        update webhook_deliveries d
        set status = v.status, next_attempt_at = v.next, last_response_status = v.code, last_error = v.error,
            completed_at = v.completed, locked_until = null, locked_by = null
        from unnest(${c.map((x) => x.id)}::uuid[], ${c.map((x) => x.attempts)}::int[], ${c.map((x) => x.status)}::text[],
                    ${c.map((x) => x.next)}::timestamptz[], ${c.map((x) => x.code)}::int[], ${c.map((x) => x.error)}::text[],
                    ${c.map((x) => x.completed)}::timestamptz[])
             as v(id, attempts, status, next, code, error, completed)
        where d.id = any(${c.map((x) => x.id)}::uuid[]) and d.id = v.id and d.attempts = v.attempts
          and d.locked_by = ${workerId}::text
      `.execute(db);
  }

  /** Fails a delivery for good while `workerId` still holds this attempt's claim; whether it did. */
  async failClaimed(
    trx: Transaction<Database>,
    claim: { id: string; attempts: number; workerId: string },
    outcome: { status: number | null; error: string; at: Date },
  ): Promise<boolean> {
    const updated = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: 'FAILED',
        next_attempt_at: null,
        locked_until: null,
        locked_by: null,
        last_response_status: outcome.status,
        last_error: outcome.error,
        completed_at: outcome.at,
      })
      .where('id', '=', claim.id)
      .where('locked_by', '=', claim.workerId)
      .where('attempts', '=', claim.attempts)
      .executeTakeFirst();
    return Number(updated.numUpdatedRows) > 0;
  }

  async disableEndpoint(db: Executor, id: string, reason: string, now: Date): Promise<void> {
    await db
      .updateTable('webhook_endpoints')
      .set({ enabled: false, disabled_reason: reason, updated_at: now })
      .where('id', '=', id)
      .execute();
  }
}
