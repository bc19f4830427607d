// Kysely queries of tracking: the packages' link hashes and the status events the account stream replays.
import { sql } from 'kysely';
import type { DB } from '../../db/database.js';
import type { JobType } from './tracking-hub.js';

export interface StatusEventRow {
  job_type: JobType;
  job_id: string;
  status: string;
  reason: string | null;
  reason_code: string | null;
  at: Date;
  /** The event's position in its job's history, from 1. */
  seq: number;
}

export class TrackingRepository {
  constructor(private readonly db: DB) {}

  async getPackageIdByTokenHash(hash: string): Promise<string | undefined> {
    return (
      await this.db.selectFrom('packages').select(['id']).where('tracking_token_hash', '=', hash).executeTakeFirst()
    )?.id;
  }

  /** When the job's (package or ride) history item at `index` (from 0) happened, as stored. */
  async getHistoryItemAt(jobId: string, index: number): Promise<string | undefined> {
    const seen = await sql<{ at: string | null }>`
      select status_history -> ${index}::int ->> 'at' as at from packages where id = ${jobId}
      union all
      select status_history -> ${index}::int ->> 'at' as at from rides where id = ${jobId}`.execute(this.db);
    return seen.rows[0]?.at ?? undefined;
  }

  /**
   * The status events since `since` of the jobs `userId` created, ordered, drives or whose driver
   * works for it (every job with `all`), in the order they happened, at most `limit`.
   */
  async listStatusEventsSince(filter: {
    since: Date;
    userId: string;
    all: boolean;
    limit: number;
  }): Promise<StatusEventRow[]> {
    const { since, userId: me, all, limit } = filter;
    const rows = await sql<StatusEventRow>`
      select * from (
        select 'PACKAGE' as job_type, h.package_id as job_id, h.status, h.reason, h.reason_code, h.at, h.id,
          (select count(*) from package_status_history h2 where h2.package_id = h.package_id and h2.id <= h.id)::int as seq
        from package_status_history h join packages p on p.id = h.package_id
        where h.at >= ${since} and (${all}::boolean or p.created_by = ${me} or p.customer_id = ${me} or p.driver_id = ${me}
          or p.driver_id in (select user_id from driver_profiles where company_id = ${me}))
        union all
        select 'RIDE', h.ride_id, h.status, h.reason, null, h.at, h.id,
          (select count(*) from ride_status_history h2 where h2.ride_id = h.ride_id and h2.id <= h.id)::int
        from ride_status_history h join rides r on r.id = h.ride_id
        where h.at >= ${since} and (${all}::boolean or r.customer_id = ${me} or r.driver_id = ${me}
          or r.driver_id in (select user_id from driver_profiles where company_id = ${me}))
      ) missed
      order by at, id
      limit ${limit}`.execute(this.db);
    return rows.rows;
  }

  async setTrackingToken(packageId: string, nonce: string, hash: string): Promise<void> {
    await this.db
      .updateTable('packages')
      .set({ tracking_nonce: nonce, tracking_token_hash: hash })
      .where('id', '=', packageId)
      .execute();
  }

  listPackagesWithoutTokenHash(limit: number): Promise<{ id: string; tracking_nonce: string }[]> {
    return (
      this.db
        .selectFrom('packages')
        .select(['id', 'tracking_nonce'])
        .where('tracking_token_hash', 'is', null)
        // In the order of its partial index: instances that run it at once meet on the same rows in the same order.
        .orderBy('id')
        .limit(limit)
        .execute()
    );
  }

  /** Sets each package's hash unless its nonce changed (a rotated link) or it has one already; how many it set. */
  async setMissingTokenHashes(rows: { id: string; nonce: string; hash: string }[]): Promise<number> {
    const result = await sql`
          update packages p set tracking_token_hash = v.hash
          from unnest(${rows.map((r) => r.id)}::uuid[], ${rows.map((r) => r.nonce)}::text[], ${rows.map((r) => r.hash)}::text[]) as v(id, nonce, hash)
          where p.id = v.id and p.tracking_nonce = v.nonce and p.tracking_token_hash is null`.execute(this.db);
    return Number(result.numAffectedRows ?? 0);
  }
}
