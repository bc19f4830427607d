// Kysely queries of recurring jobs: templates, their occurrences (the unique key that makes each
// occurrence exactly once), and the few reads of other tables they need (a country's code, a package's status).
import type { Insertable, Selectable } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type {
  OccurrenceState,
  RecurringJobsTable,
  RecurringOccurrencesTable,
  RecurringState,
} from '../../db/tables/recurring.js';
import { beforeCursor, type Cursor } from '../../shared/pagination.js';

export type RecurringJobRow = Selectable<RecurringJobsTable>;
export type OccurrenceRow = Selectable<RecurringOccurrencesTable>;
export type NewOccurrence = Insertable<RecurringOccurrencesTable>;

/** An occurrence with its package's status (null when it has no package or the package is gone). */
export type OccurrenceWithStatus = OccurrenceRow & { package_status: string | null };

export class RecurringRepository {
  constructor(private readonly db: DB) {}

  async insert(row: Insertable<RecurringJobsTable>): Promise<void> {
    await this.db.insertInto('recurring_jobs').values(row).execute();
  }

  /** The business's template, or undefined (another business's is not found either). */
  get(businessId: string, id: string): Promise<RecurringJobRow | undefined> {
    return this.db
      .selectFrom('recurring_jobs')
      .selectAll()
      .where('id', '=', id)
      .where('business_id', '=', businessId)
      .executeTakeFirst();
  }

  list(businessId: string, limit: number, cursor: Cursor | undefined): Promise<RecurringJobRow[]> {
    let query = this.db.selectFrom('recurring_jobs').selectAll().where('business_id', '=', businessId);
    if (cursor) query = query.where(beforeCursor(cursor, 'created_at', 'id'));
    return query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
  }

  async update(
    id: string,
    changes: Partial<{
      rule: string;
      time_zone: string;
      template: string;
      state: RecurringState;
      paused_until: Date | null;
      updated_at: Date;
    }>,
  ): Promise<RecurringJobRow | undefined> {
    return this.db.updateTable('recurring_jobs').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('recurring_jobs').where('id', '=', id).execute();
  }

  /** Templates that may have occurrences to create before `until`: active ones, and those paused until before it. */
  materialisable(until: Date): Promise<RecurringJobRow[]> {
    return this.db
      .selectFrom('recurring_jobs')
      .selectAll()
      .where((eb) =>
        eb.or([
          eb('state', '=', 'ACTIVE'),
          eb.and([eb('state', '=', 'PAUSED'), eb('paused_until', 'is not', null), eb('paused_until', '<', until)]),
        ]),
      )
      .orderBy('id')
      .execute();
  }

  /**
   * The template as it is now, its row locked (FOR SHARE) to the end of the caller's transaction: a
   * pause, an edit or a deletion waits for an occurrence being created, and the creation sees one
   * that committed before it.
   */
  lockShared(trx: Executor, id: string) {
    return trx
      .selectFrom('recurring_jobs')
      .select(['state', 'paused_until', 'updated_at'])
      .where('id', '=', id)
      .forShare()
      .executeTakeFirst();
  }

  /** Ends a pause whose time has come (conditional: one instance does it; updated_at stays, nothing was edited). */
  async endPause(id: string, pausedUntil: Date): Promise<void> {
    await this.db
      .updateTable('recurring_jobs')
      .set({ state: 'ACTIVE', paused_until: null })
      .where('id', '=', id)
      .where('state', '=', 'PAUSED')
      .where('paused_until', '=', pausedUntil)
      .execute();
  }

  /** The occurrences of a template at instants in [from, until), in order, with their packages' statuses. */
  occurrences(jobId: string, from: Date, until: Date): Promise<OccurrenceWithStatus[]> {
    return this.db
      .selectFrom('recurring_occurrences as o')
      .leftJoin('packages as p', 'p.id', 'o.package_id')
      .selectAll('o')
      .select('p.status as package_status')
      .where('o.recurring_job_id', '=', jobId)
      .where('o.occurs_at', '>=', from)
      .where('o.occurs_at', '<', until)
      .orderBy('o.occurs_at')
      .execute();
  }

  /** The occurrences of a template by their local keys, with their packages' statuses. */
  occurrencesByKey(jobId: string, keys: string[]): Promise<OccurrenceWithStatus[]> {
    if (keys.length === 0) return Promise.resolve([]);
    return this.db
      .selectFrom('recurring_occurrences as o')
      .leftJoin('packages as p', 'p.id', 'o.package_id')
      .selectAll('o')
      .select('p.status as package_status')
      .where('o.recurring_job_id', '=', jobId)
      .where('o.occurrence_local', 'in', keys)
      .execute();
  }

  /** The local keys of a template's occurrences at instants in [from, until). */
  async keys(jobId: string, from: Date, until: Date): Promise<Set<string>> {
    const rows = await this.db
      .selectFrom('recurring_occurrences')
      .select('occurrence_local')
      .where('recurring_job_id', '=', jobId)
      .where('occurs_at', '>=', from)
      .where('occurs_at', '<', until)
      .execute();
    return new Set(rows.map((r) => r.occurrence_local));
  }

  /**
   * Claims an occurrence: its row inserted unless (template, local date-time) exists. True when this
   * call inserted it. In the package's transaction, a second instance waits for the first's commit and
   * then finds the key taken.
   */
  async claim(trx: Executor, row: NewOccurrence): Promise<boolean> {
    const inserted = await trx
      .insertInto('recurring_occurrences')
      .values(row)
      .onConflict((oc) => oc.columns(['recurring_job_id', 'occurrence_local']).doNothing())
      .returning('occurrence_local')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  async setPackage(trx: Executor, jobId: string, local: string, packageId: string): Promise<void> {
    await trx
      .updateTable('recurring_occurrences')
      .set({ package_id: packageId })
      .where('recurring_job_id', '=', jobId)
      .where('occurrence_local', '=', local)
      .execute();
  }

  /** Moves an occurrence from one state to another (conditional); true when it moved. */
  async setState(jobId: string, local: string, from: OccurrenceState, to: OccurrenceState): Promise<boolean> {
    const result = await this.db
      .updateTable('recurring_occurrences')
      .set({ state: to })
      .where('recurring_job_id', '=', jobId)
      .where('occurrence_local', '=', local)
      .where('state', '=', from)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  async deleteOccurrence(jobId: string, local: string): Promise<void> {
    await this.db
      .deleteFrom('recurring_occurrences')
      .where('recurring_job_id', '=', jobId)
      .where('occurrence_local', '=', local)
      .execute();
  }

  /** Forgets a template's occurrences in a state at instants from `from` on (a resume re-creates paused ones). */
  async forget(jobId: string, state: OccurrenceState, from: Date): Promise<number> {
    const result = await this.db
      .deleteFrom('recurring_occurrences')
      .where('recurring_job_id', '=', jobId)
      .where('state', '=', state)
      .where('occurs_at', '>=', from)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** The ISO code of the business's country (its time zone's default), or of the given country. */
  /** The job's default zone (section 22): the business's country's, else the template's country's. */
  async countryTimeZone(businessId: string, countryId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('users as u')
      .leftJoin('countries as c', 'c.id', 'u.country_id')
      .select('c.time_zone')
      .where('u.id', '=', businessId)
      .executeTakeFirst();
    if (row?.time_zone) return row.time_zone;
    const country = await this.db
      .selectFrom('countries')
      .select('time_zone')
      .where('id', '=', countryId)
      .executeTakeFirst();
    return country?.time_zone;
  }
}
