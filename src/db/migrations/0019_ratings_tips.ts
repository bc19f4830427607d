// Ratings and tips (contract section 20): one rating per side and job, one tip per job (unique
// constraints, so concurrent duplicates cannot both land), and each rated party's maintained average.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table ratings (
      id uuid primary key,
      job_type text not null check (job_type in ('PACKAGE', 'RIDE')),
      job_id uuid not null,
      -- CREATOR: the ride's customer or the package's creator rates the driver; DRIVER: the reverse.
      rater_side text not null check (rater_side in ('CREATOR', 'DRIVER')),
      rater_id uuid not null references users(id),
      rated_id uuid not null references users(id),
      -- The job's driver, whichever way the rating goes (admin filter, a company's drivers).
      driver_id uuid not null references users(id),
      stars smallint not null check (stars between 1 and 5),
      comment text,
      created_at timestamptz not null,
      unique (job_type, job_id, rater_side)
    );
    create index ratings_rated_idx on ratings (rated_id, created_at desc, id desc);
    create index ratings_rater_idx on ratings (rater_id, created_at desc, id desc);
    create index ratings_driver_idx on ratings (driver_id, created_at desc, id desc);
    create index ratings_created_idx on ratings (created_at desc, id desc);

    -- Each rated party's average over its last 500 ratings (tenths: 45 is 4.5) and its count,
    -- updated in the rating's transaction; its row is also the lock that orders a party's ratings.
    create table rating_summaries (
      user_id uuid primary key references users(id),
      average_tenths smallint check (average_tenths between 10 and 50),
      rating_count integer not null default 0,
      updated_at timestamptz not null
    );
    -- A driver's copy, read with the driver summary of every job (no extra join on the poll).
    alter table driver_profiles add column rating_count integer not null default 0;

    create table tips (
      id uuid primary key,
      job_type text not null check (job_type in ('PACKAGE', 'RIDE')),
      job_id uuid not null,
      payer_id uuid not null references users(id),
      driver_id uuid not null references users(id),
      amount integer not null check (amount > 0),
      currency char(3) not null,
      payment_method text not null check (payment_method in ('CASH', 'ACCOUNT')),
      -- Its ledger transaction has the source key tip:<job_type>:<job_id> (postings.ts sourceKeys.tip).
      created_at timestamptz not null,
      unique (job_type, job_id)
    );
    create index tips_driver_idx on tips (driver_id, created_at desc);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table tips;
    alter table driver_profiles drop column rating_count;
    drop table rating_summaries;
    drop table ratings;
  `.execute(db);
}
