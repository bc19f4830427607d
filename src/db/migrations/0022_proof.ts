// Proof of delivery (contract section 19): what a package requires (proof_required), what its driver
// sent (the proof_* columns; the package JSON shows them as `proof`; a new upload's objects get new keys), and the images themselves in
// proof_objects when no S3 bucket is configured (S3_BUCKET): kept apart from packages, so that no
// read of a package ever carries the bytes.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    alter table packages
      add column proof_required text[] not null default '{}'
        check (proof_required <@ array['PHOTO', 'SIGNATURE']::text[]),
      -- Where each image is stored: a new key per upload (objects are never overwritten in place).
      add column proof_photo_key text,
      add column proof_signature_key text,
      add column proof_recipient_name text,
      add column proof_at timestamptz;

    -- Keys are proofs/<package id>/<photo|signature>-<uuid>.<ext> (the same keys as in a bucket).
    create table proof_objects (
      key text primary key,
      content_type text not null,
      data bytea not null,
      created_at timestamptz not null
    );
  `,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql
    .raw(
      `
    drop table proof_objects;
    alter table packages drop column proof_required, drop column proof_photo_key, drop column proof_signature_key,
      drop column proof_recipient_name, drop column proof_at;
  `,
    )
    .execute(db);
}
