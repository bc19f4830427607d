// The driver's active jobs in SQL (driver_profiles.active_job_*, active_jobs): the conditional claim written in
// the job's status transaction, its release, what explains a refused claim (driver-claims.ts), and the
// driver's availability (ONLINE, OFFLINE), which the claim reads.
import { sql, type QueryCreator } from 'kysely';
import type { Database } from '../../db/schema.js';
import { runPrepared } from '../../db/prepared.js';
import type { Executor } from '../../db/executor.js';
import type { ClaimRequest } from './driver-claims.js';

/**
 * Gives the driver this job when it is ACTIVE, ONLINE, fits the job and has room: no job at all, or
 * (section 24) packages only, fewer than max_active_jobs of them. The count is changed under the
 * driver's row lock (re-checked on the newest row by PostgreSQL), so concurrent claims never exceed
 * it. Returns the driver's counts after the claim, or undefined when it did not apply.
 */
export async function claimDriverRow(
  trx: Executor,
  claim: ClaimRequest,
  now: Date,
): Promise<{ active_jobs: number; max_active_jobs: number } | undefined> {
  return trx
    .updateTable('driver_profiles')
    .set((eb) => ({
      active_job_type: claim.jobType,
      active_job_id: claim.jobId,
      active_jobs: eb('active_jobs', '+', 1),
      updated_at: now,
    }))
    .where('user_id', '=', claim.driverId)
    .where((eb) =>
      claim.jobType === 'PACKAGE'
        ? eb.or([
            eb('active_job_id', 'is', null),
            eb.and([
              eb('active_job_type', '=', 'PACKAGE'),
              eb('active_jobs', '>=', 1),
              eb('active_jobs', '<', eb.ref('max_active_jobs')),
            ]),
          ])
        : eb('active_job_id', 'is', null),
    )
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
    .returning(['active_jobs', 'max_active_jobs'])
    .executeTakeFirst();
}

/** What decides whether a driver may take a job: status, availability, vehicle, services, current job. */
export function loadClaimState(db: Executor, driverId: string) {
  return db
    .selectFrom('driver_profiles as d')
    .innerJoin('users as u', 'u.id', 'd.user_id')
    .select([
      'd.availability',
      'd.vehicle_type',
      'd.service_types',
      'd.active_job_id',
      'd.active_job_type',
      'd.active_jobs',
      'd.max_active_jobs',
      'u.status',
    ])
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
    .set(releasedCounts(now))
    .whereRef('d.user_id', '=', 'm.driver_id')
    .where((eb) => eb.or([eb('d.active_jobs', '>', 0), eb('d.active_job_id', '=', eb.ref('m.id'))]));
}

/**
 * One job fewer (section 24): the count goes down under the row's lock; with none left the driver is
 * free (active_job_* null). With some left, active_job_id keeps naming one job the driver took (its
 * route lists them all).
 */
function releasedCounts(now: Date) {
  return {
    active_jobs: sql<number>`greatest(active_jobs - 1, 0)`,
    active_job_type: sql<'PACKAGE' | 'RIDE' | null>`case when active_jobs <= 1 then null else active_job_type end`,
    active_job_id: sql<string | null>`case when active_jobs <= 1 then null else active_job_id end`,
    updated_at: now,
  };
}

export async function releaseDriver(trx: Executor, driverId: string, jobId: string, now: Date): Promise<void> {
  await runPrepared(
    trx,
    trx
      .updateTable('driver_profiles')
      .set(releasedCounts(now))
      .where('user_id', '=', driverId)
      .where((eb) => eb.or([eb('active_jobs', '>', 0), eb('active_job_id', '=', jobId)]))
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

/** The load of the driver's active packages (section 24: 1 parcel each; weightKg, else 1/5/15 kg by size) and its vehicle's capacity. */
export function loadAndCapacity(db: Executor, driverId: string) {
  return db
    .selectFrom('driver_profiles as d')
    .innerJoin('vehicle_capacities as c', 'c.vehicle_type', 'd.vehicle_type')
    .select([
      'c.parcels as capacity_parcels',
      'c.kg as capacity_kg',
      (eb) =>
        eb
          .selectFrom('packages as p')
          .select(sql<number>`count(*)::int`.as('n'))
          .whereRef('p.driver_id', '=', 'd.user_id')
          .where('p.status', 'in', ['ASSIGNED', 'PICKED_UP', 'IN_TRANSIT'])
          .as('parcels'),
      (eb) =>
        eb
          .selectFrom('packages as p')
          .select(sql<number>`coalesce(sum(${PACKAGE_KG}), 0)::float8`.as('kg'))
          .whereRef('p.driver_id', '=', 'd.user_id')
          .where('p.status', 'in', ['ASSIGNED', 'PICKED_UP', 'IN_TRANSIT'])
          .as('kg'),
    ])
    .where('d.user_id', '=', driverId)
    .executeTakeFirst();
}

/** A package's weight for capacity (section 24), in SQL over `p.parcel`. */
export const PACKAGE_KG = sql<number>`coalesce((p.parcel->>'weightKg')::float8, case p.parcel->>'size' when 'MEDIUM' then 5 when 'LARGE' then 15 else 1 end)`;
