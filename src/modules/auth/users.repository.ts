// Kysely queries of the accounts: the users table (the role profiles created with them: profiles/).
import { sql, type Insertable } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type { AccountStatus, Role, UsersTable } from '../../db/schema.js';
import type { Cursor } from '../../shared/pagination.js';
import { USER_COLUMNS, type UserRow } from './users.schemas.js';

/** What the password step reads of an account. */
const CREDENTIAL_COLUMNS = [
  'id',
  'phone',
  'password_hash',
  'status',
  'role',
  'locked_until',
  'failed_login_count',
] as const;

// E-mail addresses are matched without regard to case (the unique index is on lower(email)).
const emailIs = (email: string) => sql<boolean>`lower(email) = ${email.toLowerCase()}`;

export class UsersRepository {
  constructor(private readonly db: DB) {}

  getById(id: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').select(USER_COLUMNS).where('id', '=', id).executeTakeFirst();
  }

  async getIdByEmail(db: Executor, email: string): Promise<string | undefined> {
    return (await db.selectFrom('users').select('id').where(emailIs(email)).executeTakeFirst())?.id;
  }

  async getIdByPhone(db: Executor, phone: string): Promise<string | undefined> {
    return (await db.selectFrom('users').select('id').where('phone', '=', phone).executeTakeFirst())?.id;
  }

  async getStatus(db: Executor, id: string): Promise<AccountStatus | undefined> {
    return (await db.selectFrom('users').select('status').where('id', '=', id).executeTakeFirst())?.status;
  }

  async getActiveCompanyId(db: Executor, id: string): Promise<string | undefined> {
    const row = await db
      .selectFrom('users')
      .select('id')
      .where('id', '=', id)
      .where('role', '=', 'COMPANY')
      .where('status', '=', 'ACTIVE')
      .executeTakeFirst();
    return row?.id;
  }

  /** Any one account with `role`. */
  async getAnyIdByRole(role: Role): Promise<string | undefined> {
    return (await this.db.selectFrom('users').select('id').where('role', '=', role).limit(1).executeTakeFirst())?.id;
  }

  /** Accounts newest first, at millisecond precision (the cursor carries an ISO timestamp), `limit` + 1 rows. */
  list(filter: { role?: Role; status?: AccountStatus; cursor?: Cursor; limit: number }): Promise<UserRow[]> {
    let query = this.db.selectFrom('users').select(USER_COLUMNS);
    if (filter.role) query = query.where('role', '=', filter.role);
    if (filter.status) query = query.where('status', '=', filter.status);
    const at = sql`date_trunc('milliseconds', created_at)`;
    const { cursor } = filter;
    if (cursor) query = query.where(sql<boolean>`(${at}, id) < (${cursor.createdAt}::timestamptz, ${cursor.id}::uuid)`);
    return query
      .orderBy(at, 'desc')
      .orderBy('id', 'desc')
      .limit(filter.limit + 1)
      .execute();
  }

  getCredentialsByEmail(email: string) {
    return this.db.selectFrom('users').select(CREDENTIAL_COLUMNS).where(emailIs(email)).executeTakeFirst();
  }

  getCredentialsByPhone(phone: string) {
    return this.db.selectFrom('users').select(CREDENTIAL_COLUMNS).where('phone', '=', phone).executeTakeFirst();
  }

  getCredentialsById(id: string) {
    return this.db.selectFrom('users').select(CREDENTIAL_COLUMNS).where('id', '=', id).executeTakeFirst();
  }

  /**
   * Counts one more wrong password in one statement (no lost count between two at once): the
   * `lockAfter`-th in a row sets `locked_until` to `lockUntil` and starts the count again.
   */
  async addWrongPassword(id: string, lockAfter: number, lockUntil: Date): Promise<void> {
    await this.db
      .updateTable('users')
      .set({
        failed_login_count: sql`case when failed_login_count + 1 >= ${lockAfter} then 0 else failed_login_count + 1 end`,
        locked_until: sql`case when failed_login_count + 1 >= ${lockAfter} then ${lockUntil}::timestamptz else locked_until end`,
      })
      .where('id', '=', id)
      .execute();
  }

  async clearWrongPasswords(id: string): Promise<void> {
    await this.db.updateTable('users').set({ failed_login_count: 0 }).where('id', '=', id).execute();
  }

  /** Sets the password; with `unlock`, also clears the wrong-password count and lock. */
  async setPassword(
    db: Executor,
    id: string,
    passwordHash: string,
    now: Date,
    options: { unlock: boolean },
  ): Promise<void> {
    await db
      .updateTable('users')
      .set({
        password_hash: passwordHash,
        ...(options.unlock ? { failed_login_count: 0, locked_until: null } : {}),
        updated_at: now,
      })
      .where('id', '=', id)
      .execute();
  }

  setLocale(id: string, locale: string | null): Promise<UserRow | undefined> {
    return this.db.updateTable('users').set({ locale }).where('id', '=', id).returning(USER_COLUMNS).executeTakeFirst();
  }

  markPhoneVerified(id: string): Promise<UserRow | undefined> {
    return this.db
      .updateTable('users')
      .set({ is_phone_verified: true })
      .where('id', '=', id)
      .returning(USER_COLUMNS)
      .executeTakeFirst();
  }

  /** Moves an account whose status is one of `from` to `to`; undefined when it is in none of them (or gone). */
  updateStatus(
    db: Executor,
    id: string,
    change: { from: AccountStatus[]; to: AccountStatus; reason: string | null; now: Date },
  ): Promise<UserRow | undefined> {
    return db
      .updateTable('users')
      .set({ status: change.to, status_reason: change.reason, updated_at: change.now })
      .where('id', '=', id)
      .where('status', 'in', change.from)
      .returning(USER_COLUMNS)
      .executeTakeFirst();
  }

  insert(db: Executor, row: Insertable<UsersTable>): Promise<UserRow> {
    return db.insertInto('users').values(row).returning(USER_COLUMNS).executeTakeFirstOrThrow();
  }
}
