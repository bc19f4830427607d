// Kysely queries of the login sessions (auth_sessions): one row per refresh token.
import type { Insertable } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { AuthSessionsTable, Role } from '../../db/schema.js';

export class SessionsRepository {
  constructor(private readonly db: DB) {}

  async insert(row: Insertable<AuthSessionsTable>): Promise<void> {
    await this.db.insertInto('auth_sessions').values(row).execute();
  }

  /** The session of a refresh token, with its user's role and status. */
  getByRefreshHash(refreshTokenHash: string) {
    return this.db
      .selectFrom('auth_sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select(['s.id', 's.user_id', 's.expires_at', 's.revoked_at', 'u.role', 'u.status'])
      .where('s.refresh_token_hash', '=', refreshTokenHash)
      .executeTakeFirst();
  }

  async touch(id: string, now: Date): Promise<void> {
    await this.db.updateTable('auth_sessions').set({ last_used_at: now }).where('id', '=', id).execute();
  }

  /** Revokes the live session of a refresh token; its id and user, or undefined when none was live. */
  async revokeByRefreshHash(
    refreshTokenHash: string,
    now: Date,
  ): Promise<{ id: string; userId: string; role: Role } | undefined> {
    const row = await this.db
      .updateTable('auth_sessions as s')
      .set({ revoked_at: now })
      .from('users as u')
      .whereRef('u.id', '=', 's.user_id')
      .where('s.refresh_token_hash', '=', refreshTokenHash)
      .where('s.revoked_at', 'is', null)
      .where('s.expires_at', '>', now)
      .returning(['s.id', 's.user_id', 'u.role'])
      .executeTakeFirst();
    return row && { id: row.id, userId: row.user_id, role: row.role };
  }

  /** Revokes every live session of a user (optionally but one); returns their ids. */
  async revokeForUser(db: Executor, userId: string, now: Date, exceptSessionId?: string): Promise<string[]> {
    let query = db
      .updateTable('auth_sessions')
      .set({ revoked_at: now })
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null);
    if (exceptSessionId) query = query.where('id', '!=', exceptSessionId);
    const rows = await query.returning('id').execute();
    return rows.map((r) => r.id);
  }
}
