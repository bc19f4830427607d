// Kysely queries of the SMS codes: the code steps (otp_sessions) and the sends behind the per-phone cap (otp_sends).
import type { Insertable, Selectable } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { OtpPurpose, OtpSendsTable, OtpSessionsTable } from '../../db/tables/auth.js';

export type CodeStepRow = Selectable<OtpSessionsTable>;

const STEP_COLUMNS = [
  'id',
  'purpose',
  'user_id',
  'phone',
  'code_hash',
  'code_expires_at',
  'attempts',
  'resends',
  'remember_me',
  'expires_at',
  'consumed_at',
  'created_at',
] as const;

export class CodesRepository {
  constructor(private readonly db: DB) {}

  /** When codes were sent to `phone` after `since`, oldest first. */
  async listSendTimes(phone: string, since: Date): Promise<Date[]> {
    const rows = await this.db
      .selectFrom('otp_sends')
      .select(['sent_at'])
      .where('phone', '=', phone)
      .where('sent_at', '>', since)
      .orderBy('sent_at', 'asc')
      .execute();
    return rows.map((r) => r.sent_at);
  }

  async insertSend(row: Insertable<OtpSendsTable>): Promise<void> {
    await this.db.insertInto('otp_sends').values(row).execute();
  }

  /** Deletes the sends at or before `upTo` (of one phone, or of all); returns how many. */
  async deleteSendsUpTo(upTo: Date, phone?: string): Promise<number> {
    let query = this.db.deleteFrom('otp_sends').where('sent_at', '<=', upTo);
    if (phone !== undefined) query = query.where('phone', '=', phone);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async insertStep(row: Insertable<OtpSessionsTable>): Promise<void> {
    await this.db.insertInto('otp_sessions').values(row).execute();
  }

  getStep(id: string, purpose: OtpPurpose): Promise<CodeStepRow | undefined> {
    return this.db
      .selectFrom('otp_sessions')
      .select(STEP_COLUMNS)
      .where('id', '=', id)
      .where('purpose', '=', purpose)
      .executeTakeFirst();
  }

  /** Counts one more wrong code; the new count, or undefined when the step is gone. */
  async addAttempt(id: string): Promise<number | undefined> {
    const row = await this.db
      .updateTable('otp_sessions')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('id', '=', id)
      .returning('attempts')
      .executeTakeFirst();
    return row?.attempts;
  }

  /**
   * Marks a step used if it still is unused, holds the same code and has fewer than `maxAttempts`
   * wrong codes: one conditional update, so that only one of two concurrent callers wins.
   */
  async consume(
    db: Executor,
    step: { id: string; code_hash: string },
    maxAttempts: number,
    now: Date,
  ): Promise<boolean> {
    const row = await db
      .updateTable('otp_sessions')
      .set({ consumed_at: now })
      .where('id', '=', step.id)
      .where('consumed_at', 'is', null)
      .where('code_hash', '=', step.code_hash)
      .where('attempts', '<', maxAttempts)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Puts a new code in an unused step that has had fewer than `maxResends` resends; false if none. */
  async replaceCode(id: string, codeHash: string, codeExpiresAt: Date, maxResends: number): Promise<boolean> {
    const row = await this.db
      .updateTable('otp_sessions')
      .set((eb) => ({ code_hash: codeHash, code_expires_at: codeExpiresAt, resends: eb('resends', '+', 1) }))
      .where('id', '=', id)
      .where('resends', '<', maxResends)
      .where('consumed_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Deletes the steps that ended at or before `now`; returns how many. */
  async deleteStepsEndedBy(now: Date): Promise<number> {
    const result = await this.db.deleteFrom('otp_sessions').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
