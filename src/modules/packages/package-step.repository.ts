// A driver's package step in ONE statement (issue 41) and the package columns a read returns, which
// that statement returns too (PackagesRepository reads with them; it hands its `step` here).
import { sql, type CompiledQuery } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import { runPrepared } from '../../db/prepared.js';
import type { PackageStatus } from '../../db/tables/jobs.js';
import { ClaimFirst, KEYED_ROW_PREFIX, type InlineClaim } from '../../shared/record-answer.js';
import { DRIVER_SUMMARY_COLUMNS } from '../jobs/driver-claims.js';
import { releaseMovedDriver } from '../jobs/driver-claims.repository.js';
import type { StatusHistoryEntry, StatusSet } from '../jobs/lifecycle.js';
import { insertForMovedJob } from '../webhooks/outbox.repository.js';
import { webhookPayload } from '../webhooks/outbox.js';
import { FINAL_PACKAGE_STATUSES } from './package-status.js';
import type { PackageRow } from './packages.repository.js';

/** The joined tables' columns of a package read (dispatch state, tip). */
export const PACKAGE_JOINED_COLUMNS = [
  'dj.state as dispatch_state',
  'dj.attempts as dispatch_attempts',
  'tp.amount as tip_amount',
  'tp.currency as tip_currency',
] as const;

/** The package's own columns a read returns (status_history apart: a step returns it with its new item). */
export const PACKAGE_OWN_COLUMNS = [
  'p.id',
  'p.status',
  'p.vehicle_type',
  'p.country_id',
  'p.created_by',
  'p.business_id',
  'p.customer_id',
  'p.driver_id',
  'p.reference',
  'p.pickup',
  'p.dropoff',
  'p.parcel',
  'p.delivery_code_hash',
  'p.created_at',
  'p.updated_at',
  'p.tracking_nonce',
  'p.notify_recipient',
  'p.price_amount',
  'p.price_currency',
  'p.price_inputs',
  'p.cancellation_fee',
  'p.payment_method',
  'p.commission_rate',
  'p.price_breakdown',
  'p.cod_amount',
  'p.cash_collected',
  'p.proof_required',
  'p.proof_photo_key',
  'p.proof_signature_key',
  'p.proof_recipient_name',
  'p.proof_at',
  'p.pickup_window_start',
  'p.pickup_window_end',
  'p.dropoff_window_start',
  'p.dropoff_window_end',
  'p.time_zone',
  'p.fail_reason_code',
  'p.previous_attempt_id',
  'p.return_of',
  'p.follow_up_id',
  'p.payment_phone',
  'p.payment_state',
  'p.payment_receipt',
  'p.payment_failure',
] as const;

/** A status history item as the trigger of migration 0006 appends it to packages.status_history. */
const historyItem = (h: StatusHistoryEntry<PackageStatus>) =>
  sql`jsonb_build_array(jsonb_strip_nulls(jsonb_build_object('status', ${h.status}::text,
    'at', to_char(${h.at}::timestamptz at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'reason', ${h.reason}::text,
    'reasonCode', ${h.reasonCode ?? null}::text)))`;

/** What one statement of a driver's step writes (PackagesRepository.step). */
export interface PackageStep {
  id: string;
  /** The statuses the step applies from. */
  from: readonly PackageStatus[];
  /** The guard: the package's assigned driver. */
  driverId: string;
  set: Omit<StatusSet<PackageStatus>, 'fare_amount' | 'fare_detail'>;
  history: StatusHistoryEntry<PackageStatus>;
  releaseDriver: boolean;
  /** Delivering: no delivery code, no cash on delivery, the required proof present (else the full path checks them). */
  deliverable: boolean;
  event: string;
  /** A request's Idempotency-Key, claimed in the same statement with the row as its stored answer. */
  claim?: InlineClaim;
}

/** The row's columns that are instants: a stored row (JSON) has them as text. */
const ROW_INSTANTS = [
  'created_at',
  'updated_at',
  'proof_at',
  'pickup_window_start',
  'pickup_window_end',
  'dropoff_window_start',
  'dropoff_window_end',
  'driver_location_at',
] as const;

/** What a placeholder parameter of a step's template starts with (a value no step sends). */
const SLOT = '\u0000slot:';

/** What the step's statement says when its Idempotency-Key is already held: the statement fails as a whole. */
const KEY_TAKEN = 'IDEMPOTENCY_KEY_TAKEN';

export class PackageSteps {
  /** The step's statement per shape, its values as SLOT placeholders (step). */
  private readonly templates = new Map<string, CompiledQuery<unknown>>();

  constructor(private readonly db: DB) {}

  /**
   * A driver's step in ONE statement (issue 41): the guarded status change (its driver, a status it
   * applies from, and for delivery the absence of what the full path must check), its history row,
   * its webhook outbox rows, the driver freed when it ends the job, the request's Idempotency-Key when
   * it has one, and the package as a read returns it after the change (the history with its new item,
   * as the trigger appends it). Undefined when the guard did not hold: nothing was written, and the
   * caller's full path says why.
   *
   * The statement is built by Kysely once per shape (the columns set, the statuses it applies from,
   * delivery's guard, the release, the key) with placeholders for its values, and each step only
   * fills them in: building and compiling the CTEs cost more CPU than the rest of the step's Node work.
   */
  async step(db: Executor, change: PackageStep): Promise<PackageRow | undefined> {
    const { set, history, claim } = change;
    const shape = `${set.status}|${Object.keys(set).join(',')}|${change.from.length}|${change.deliverable}|${change.releaseDriver}|${claim !== undefined}`;
    let template = this.templates.get(shape);
    if (!template) {
      const slot = (name: string) => `${SLOT}${name}`;
      const slots: PackageStep = {
        id: slot('id'),
        from: change.from.map((_, i) => slot(`from${i}`)) as never,
        driverId: slot('driverId'),
        set: Object.fromEntries(Object.keys(set).map((k) => [k, slot(`set.${k}`)])) as never,
        history: {
          status: slot('history.status') as never,
          reason: slot('history.reason'),
          reasonCode: slot('history.reasonCode') as never,
          actorId: slot('history.actorId'),
          at: slot('history.at') as never,
        },
        releaseDriver: change.releaseDriver,
        deliverable: change.deliverable,
        event: slot('event'),
        ...(claim
          ? {
              claim: Object.fromEntries(Object.keys(claim).map((k) => [k, slot(`claim.${k}`)])) as never,
            }
          : {}),
      };
      // The status itself is part of the shape (a final one also writes finished_at).
      template = this.stepQuery({ ...slots, set: { ...slots.set, status: set.status } }, slot('payload'));
      this.templates.set(shape, template);
    }
    const values: Record<string, unknown> = {
      id: change.id,
      driverId: change.driverId,
      'history.status': history.status,
      'history.reason': history.reason,
      'history.reasonCode': history.reasonCode ?? null,
      'history.actorId': history.actorId,
      'history.at': history.at,
      event: change.event,
      payload: webhookPayload(change.event, change.id, set.status, set.updated_at),
    };
    change.from.forEach((status, i) => (values[`from${i}`] = status));
    for (const [k, v] of Object.entries(set)) values[`set.${k}`] = v;
    if (claim) for (const [k, v] of Object.entries(claim)) values[`claim.${k}`] = v;
    const query = {
      ...template,
      parameters: template.parameters.map((p) =>
        typeof p === 'string' && p.startsWith(SLOT) ? values[p.slice(SLOT.length)] : p,
      ),
    };
    try {
      // Prepared: one text per step's set of columns (a handful), keyed or not.
      const [row] = await runPrepared(db, query);
      if (row) delete (row as { key_claimed?: number }).key_claimed;
      return row as PackageRow | undefined;
    } catch (err) {
      if (claim && err instanceof Error && err.message.includes(KEY_TAKEN)) throw new ClaimFirst();
      throw err;
    }
  }

  private stepQuery(change: PackageStep, payload: string) {
    const { set, history } = change;
    const finished = FINAL_PACKAGE_STATUSES.includes(set.status) ? { finished_at: set.updated_at } : {};
    const changes = this.db
      .with('moved', (qc) => {
        let update = qc
          .updateTable('packages')
          .set({ ...set, ...finished })
          .where('id', '=', change.id)
          .where('status', 'in', [...change.from])
          .where('driver_id', '=', change.driverId);
        if (change.deliverable)
          update = update
            .where('delivery_code_hash', 'is', null)
            .where('cod_amount', 'is', null)
            .where(
              sql<boolean>`(not 'PHOTO' = any(proof_required) or proof_photo_key is not null)
                and (not 'SIGNATURE' = any(proof_required) or proof_signature_key is not null)`,
            );
        return update.returningAll();
      })
      .with('history', (qc) =>
        qc
          .insertInto('package_status_history')
          .columns(['package_id', 'status', 'reason', 'reason_code', 'actor_id', 'at'])
          .expression(
            sql`select id, ${history.status}::text, ${history.reason}::text, ${history.reasonCode ?? null}::text, ${history.actorId}::uuid, ${history.at}::timestamptz from moved`,
          ),
      )
      .with(
        'outbox',
        (qc) =>
          insertForMovedJob(qc as never, {
            event: change.event,
            deliveryId: change.id,
            payload,
            occurredAt: set.updated_at,
          }) as never,
      );
    const all = change.releaseDriver
      ? (changes.with(
          'released',
          (qc) => releaseMovedDriver(qc as never, set.updated_at) as never,
        ) as unknown as typeof changes)
      : changes;
    const answered = all.with('answer', (qc) =>
      qc
        .selectFrom('moved as p')
        .leftJoin('users as du', 'du.id', 'p.driver_id')
        .leftJoin('driver_profiles as dp', 'dp.user_id', 'p.driver_id')
        .leftJoin('dispatch_jobs as dj', 'dj.job_id', 'p.id')
        .leftJoin('tips as tp', (join) =>
          join.onRef('tp.job_id', '=', 'p.id').on(sql<boolean>`tp.job_type = 'PACKAGE'`),
        )
        .select(PACKAGE_JOINED_COLUMNS)
        .select(PACKAGE_OWN_COLUMNS)
        .select(DRIVER_SUMMARY_COLUMNS)
        .select(sql<PackageRow['status_history']>`p.status_history || ${historyItem(history)}`.as('status_history')),
    );
    const { claim } = change;
    // With a key: the key inserted DONE with the row as its answer, or taken over when expired or
    // abandoned (as IdempotencyRepository.claim does); held by another record, the cast fails and with
    // it the whole statement (nothing written), and the caller claims the key as usual (ClaimFirst).
    const query = claim
      ? answered
          .with('claim', (qc) =>
            qc
              .insertInto('idempotency_keys')
              .columns(['account_id', 'key', 'request_hash', 'state', 'response_status', 'response_body', 'created_at'])
              .expression(
                sql`select ${claim.accountId}::uuid, ${claim.key}::text, ${claim.requestHash}::text, 'DONE',
                  ${claim.status}::int, ${KEYED_ROW_PREFIX} || to_jsonb(a)::text, ${claim.claimedAt}::timestamptz
                  from answer a`,
              )
              .onConflict((oc) =>
                oc
                  .columns(['account_id', 'key'])
                  .doUpdateSet((eb) => ({
                    request_hash: eb.ref('excluded.request_hash'),
                    state: eb.ref('excluded.state'),
                    response_status: eb.ref('excluded.response_status'),
                    response_body: eb.ref('excluded.response_body'),
                    created_at: eb.ref('excluded.created_at'),
                  }))
                  .where((eb) =>
                    eb.or([
                      eb('idempotency_keys.created_at', '<', claim.expiredBefore),
                      eb.and([
                        eb('idempotency_keys.state', '=', 'IN_FLIGHT'),
                        eb('idempotency_keys.created_at', '<', claim.abandonedBefore),
                      ]),
                    ]),
                  ),
              )
              .returning('account_id'),
          )
          .selectFrom('answer')
          .selectAll()
          .select(
            sql<number>`(case when exists (select 1 from claim) then '1' else ${sql.lit(KEY_TAKEN)} end)::int`.as(
              'key_claimed',
            ),
          )
      : answered.selectFrom('answer').selectAll();
    return query.compile();
  }

  /** The row a keyed step stored with its key (step), as a read returns it. */
  storedRow(text: string): PackageRow {
    const row = JSON.parse(text) as Record<string, unknown>;
    for (const column of ROW_INSTANTS) {
      const value = row[column];
      if (typeof value === 'string') row[column] = new Date(value);
    }
    return row as PackageRow;
  }
}
