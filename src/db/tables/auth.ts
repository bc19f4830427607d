// Kysely types of the auth tables (see src/db/migrations/0002_auth.ts).
import type { ColumnType, Generated } from 'kysely';

export type OtpPurpose = 'REGISTER' | 'LOGIN' | 'PASSWORD_RESET';

export interface OtpSessionsTable {
  id: string;
  purpose: OtpPurpose;
  user_id: string | null;
  phone: string;
  code_hash: string;
  code_expires_at: Date;
  attempts: Generated<number>;
  resends: Generated<number>;
  remember_me: Generated<boolean>;
  expires_at: Date;
  consumed_at: Date | null;
  created_at: Date;
}

/** One row per code sent, for the per-phone hourly cap. */
export interface OtpSendsTable {
  id: string;
  phone: string;
  sent_at: Date;
}

// Columns 0002 adds to users: the wrong-password counter and the lock it sets.
declare module './foundation.js' {
  interface UsersTable {
    failed_login_count: Generated<number>;
    locked_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  }
}

export interface AuthTables {
  otp_sessions: OtpSessionsTable;
  otp_sends: OtpSendsTable;
}
