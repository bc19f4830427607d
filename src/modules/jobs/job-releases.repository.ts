// Releases (contract section 13): who handed a job back, written in the release's transaction and read
// in every assignment's, so that "never that driver's again" holds across instances and races; and how
// many times a job was released, counted from its history (exact for jobs released before the rule too).
import { sql } from 'kysely';
import type { JobType } from './driver-claims.js';
import type { Executor } from '../../db/executor.js';

export async function recordRelease(
  trx: Executor,
  r: { jobId: string; driverId: string; reason: string | null; actorId: string; at: Date },
): Promise<void> {
  await trx
    .insertInto('dispatch_releases')
    .values({ job_id: r.jobId, driver_id: r.driverId, reason: r.reason, actor_id: r.actorId, at: r.at })
    .onConflict((oc) =>
      oc.columns(['job_id', 'driver_id']).doUpdateSet({ reason: r.reason, actor_id: r.actorId, at: r.at }),
    )
    .execute();
}

export async function releasedBy(trx: Executor, jobId: string, driverId: string): Promise<boolean> {
  const row = await trx
    .selectFrom('dispatch_releases')
    .select('job_id')
    .where('job_id', '=', jobId)
    .where('driver_id', '=', driverId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Every entry into the waiting status after the first (a package's PENDING, a ride's REQUESTED) is a release. */
export async function releaseCount(db: Executor, jobType: JobType, jobId: string): Promise<number> {
  const query =
    jobType === 'PACKAGE'
      ? sql<{
          n: number;
        }>`select count(*)::int as n from package_status_history where package_id = ${jobId} and status = 'PENDING'`
      : sql<{
          n: number;
        }>`select count(*)::int as n from ride_status_history where ride_id = ${jobId} and status = 'REQUESTED'`;
  const { rows } = await query.execute(db);
  return Math.max(0, (rows[0]?.n ?? 0) - 1);
}
