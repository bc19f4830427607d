// Live tracking (contract section 14): each package's tracking token is derived from a secret and a
// per-package nonce (HMAC), and only its SHA-256 is stored, for the lookup. A new nonce revokes it.
// Rows written before this migration (or by a version that does not know the columns) get a nonce
// from the column default; their hash is filled in by the tracking service at start.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    alter table packages
      add column tracking_nonce text not null default gen_random_uuid()::text,
      add column tracking_token_hash text,
      add column notify_recipient boolean not null default false;
    create unique index packages_tracking_token_hash on packages (tracking_token_hash);
    create index packages_tracking_token_missing on packages (id) where tracking_token_hash is null;
  `,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    drop index packages_tracking_token_missing;
    drop index packages_tracking_token_hash;
    alter table packages drop column tracking_nonce, drop column tracking_token_hash, drop column notify_recipient;
  `,
    )
    .execute(db);
}
