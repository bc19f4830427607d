// Login sessions, one-time codes and per-account protection (auth module).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table users
      add column failed_login_count integer not null default 0,
      add column locked_until timestamptz;

    -- A code step (registration, login, password reset). Codes are stored only as HMACs.
    create table otp_sessions (
      id uuid primary key,
      purpose text not null check (purpose in ('REGISTER', 'LOGIN', 'PASSWORD_RESET')),
      user_id uuid references users(id) on delete cascade,
      phone text not null,
      code_hash text not null,
      code_expires_at timestamptz not null,
      attempts integer not null default 0,
      resends integer not null default 0,
      remember_me boolean not null default false,
      expires_at timestamptz not null,
      consumed_at timestamptz,
      created_at timestamptz not null
    );
    create index otp_sessions_expires_idx on otp_sessions (expires_at);

    create table otp_sends (
      id uuid primary key,
      phone text not null,
      sent_at timestamptz not null
    );
    create index otp_sends_phone_idx on otp_sends (phone, sent_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table otp_sends, otp_sessions;
    alter table users drop column failed_login_count, drop column locked_until;
  `.execute(db);
}
