// The one read of authentication (http/authenticate.ts): a session with its account's role and status.
// Here and not in modules/auth/ because http/ imports no feature module.
import { runPrepared } from '../db/prepared.js';
import type { DB } from '../db/database.js';

export class SessionStateRepository {
  constructor(private readonly db: DB) {}

  async getById(sessionId: string) {
    const query = this.db
      .selectFrom('auth_sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select(['s.user_id', 's.revoked_at', 'u.role', 'u.status'])
      .where('s.id', '=', sessionId);
    return (await runPrepared(this.db, query.compile()))[0];
  }
}
