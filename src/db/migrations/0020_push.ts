// Web Push subscriptions (contract section 19): one row per browser subscription, owned by one user.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table push_subscriptions (
      id uuid primary key,
      user_id uuid not null references users(id) on delete cascade,
      -- The push service's URL for this browser: a capability, never logged in full.
      endpoint text not null unique,
      p256dh text not null,
      auth text not null,
      created_at timestamptz not null,
      last_success_at timestamptz
    );
    create index push_subscriptions_user_idx on push_subscriptions (user_id, created_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table push_subscriptions`.execute(db);
}
