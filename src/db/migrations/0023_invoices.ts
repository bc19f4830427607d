// Business invoices (contract section 21): one per business, month (UTC) and currency, a snapshot of
// the business account's ledger entries in the month, numbered without gaps.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table invoices (
      id uuid primary key,
      -- Sequential per operator without gaps: max + 1 under an advisory lock (InvoiceService.runMonth);
      -- an identity column would leave a gap at each conflict or rollback.
      seq bigint not null unique,
      number text not null unique,
      business_id uuid not null references users(id),
      -- The first day of the month (UTC).
      month date not null,
      currency char(3) not null,
      -- As they were when the invoice was issued.
      business_name text not null,
      business_address text,
      opening_balance bigint not null,
      closing_balance bigint not null,
      totals jsonb not null,
      lines jsonb not null,
      line_count int not null,
      created_at timestamptz not null,
      -- A run of the same month twice, or two at once, creates nothing new.
      unique (business_id, month, currency)
    );
    create index invoices_business_idx on invoices (business_id, created_at desc, id desc);
    create index invoices_created_idx on invoices (created_at desc, id desc);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table invoices`.execute(db);
}
