// The driver's one active job in SQL (driver_profiles.active_job_*): the conditional claim written in
// the job's status transaction, its release, what explains a refused claim (driver-claims.ts), and the
// driver's availability (ONLINE, OFFLINE), which the claim reads.
import { sql, type QueryCreator } from 'kysely';
import type { Database } from '../../db/schema.js';
import { runPrepared } from '../../db/prepared.js';
import type { Executor } from '../../db/executor.js';
import type { ClaimRequest } from './driver-claims.js';

/** Marks the driver busy with this job when it is ACTIVE, ONLINE, free and fits the job; false otherwise. */
export async function claimDriver(trx: Executor, claim: ClaimRequest, now: Date): Promise<boolean> {
  const result = await trx
    .updateTable('driver_profiles')
    .set({ active_job_type: claim.jobType, active_job_id: claim.jobId, updated_at: now })
    .where('user_id', '=', claim.driverId)
    .where('active_job_id', 'is', null)
    .where('availability', '=', 'ONLINE')
    .where('vehicle_type', '=', claim.vehicleType)
    .where(sql<boolean>`${claim.orderType} = any(service_types)`)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('users')
          .select(sql`1`.as('one'))
          .where('users.id', '=', claim.driverId)
          .where('users.status', '=', 'ACTIVE'),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** What decides whether a driver may take a job: status, availability, vehicle, services, current job. */
export function loadClaimState(db: Executor, driverId: string) {
  return db
    .selectFrom('driver_profiles as d')
    .innerJoin('users as u', 'u.id', 'd.user_id')
    .select(['d.availability', 'd.vehicle_type', 'd.service_types', 'd.active_job_id', 'u.status'])
    .where('d.user_id', '=', driverId)
    .executeTakeFirst();
}

/**
 * The driver release as a CTE of a job's status change: frees the driver of the changed job
 * (`moved`: its id and driver_id) in the same statement, after the job's row is locked.
 */
export function releaseMovedDriver(
  db: QueryCreator<Database & { moved: { id: string; driver_id: string | null } }>,
  now: Date,
) {
  return db
    .updateTable('driver_profiles as d')
    .from('moved as m')
    .set({ active_job_type: null, active_job_id: null, updated_at: now })
    .whereRef('d.user_id', '=', 'm.driver_id')
    .whereRef('d.active_job_id', '=', 'm.id');
}

export async function releaseDriver(trx: Executor, driverId: string, jobId: string, now: Date): Promise<void> {
  await runPrepared(
    trx,
    trx
      .updateTable('driver_profiles')
      .set({ active_job_type: null, active_job_id: null, updated_at: now })
      .where('user_id', '=', driverId)
      .where('active_job_id', '=', jobId)
      .compile(),
  );
}

/** Going OFFLINE only applies while the driver has no active job (checked in the same statement). */
export async function setAvailability(
  db: Executor,
  driverId: string,
  availability: 'ONLINE' | 'OFFLINE',
  now: Date,
): Promise<boolean> {
  let q = db.updateTable('driver_profiles').set({ availability, updated_at: now }).where('user_id', '=', driverId);
  if (availability === 'OFFLINE') q = q.where('active_job_id', 'is', null);
  const result = await q.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Signing out: OFFLINE even during an active job (nobody is behind the phone); whether it was ONLINE. */
export async function setOfflineOnSignOut(db: Executor, driverId: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('driver_profiles')
    .set({ availability: 'OFFLINE', updated_at: now })
    .where('user_id', '=', driverId)
    .where('availability', '=', 'ONLINE')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
