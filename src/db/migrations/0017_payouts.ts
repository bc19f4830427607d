// Settlements, business payments and payout batches (contract section 21). Their money moves in the
// ledger (0016); these tables hold what an operator recorded and what a batch pays to whom.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    -- Cash a driver handed in, and a business's payment of its invoice: one ledger transaction each
    -- (source key settlement:<id>, business-payment:<id>).
    create table settlements (
      id uuid primary key,
      driver_id uuid not null references users(id),
      amount bigint not null check (amount > 0),
      currency char(3) not null,
      reference text not null,
      recorded_by uuid not null references users(id),
      transaction_id uuid not null,
      created_at timestamptz not null
    );
    create index settlements_driver_idx on settlements (driver_id, created_at desc);

    create table business_payments (
      id uuid primary key,
      business_id uuid not null references users(id),
      amount bigint not null check (amount > 0),
      currency char(3) not null,
      reference text not null,
      recorded_by uuid not null references users(id),
      transaction_id uuid not null,
      created_at timestamptz not null
    );
    create index business_payments_business_idx on business_payments (business_id, created_at desc);

    create table payout_batches (
      id uuid primary key,
      -- For people: the lines' bank references are PO-<number>-<seq>.
      number bigint generated always as identity unique,
      currency char(3) not null,
      minimum bigint not null check (minimum > 0),
      -- OPEN while a line is OPEN.
      status text not null check (status in ('OPEN', 'CLOSED')),
      line_count int not null,
      total bigint not null,
      created_by uuid not null references users(id),
      created_at timestamptz not null,
      closed_at timestamptz
    );
    create index payout_batches_created_idx on payout_batches (created_at desc, id desc);

    -- No foreign keys (as ledger_entries): a batch inserts up to 100,000 lines in one statement, in the
    -- transaction that inserted its batch row, and only PayoutService writes this table.
    create table payout_lines (
      id uuid primary key,
      batch_id uuid not null,
      seq int not null,
      account_id uuid not null,
      party_kind text not null check (party_kind in ('DRIVER', 'BUSINESS')),
      party_id uuid not null,
      -- As sent to the bank: the name and phone when the batch was created.
      name text not null,
      phone text not null,
      amount bigint not null check (amount > 0),
      status text not null check (status in ('OPEN', 'PAID', 'FAILED')),
      failure_reason text,
      -- The PAYOUT transaction (the balance moved to clearing), and the PAYOUT_PAID or PAYOUT_FAILED one.
      transaction_id uuid not null,
      closing_transaction_id uuid,
      created_at timestamptz not null,
      closed_at timestamptz,
      unique (batch_id, seq)
    );
    -- The rule "an account in an open batch is left out of the next one", held by the database too.
    create unique index payout_lines_open_account_idx on payout_lines (account_id) where status = 'OPEN';

    -- GET /admin/balances pages accounts newest first. created_at never changes, so balance updates
    -- stay HOT (see 0016).
    create index ledger_accounts_created_idx on ledger_accounts (created_at desc, id desc);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop index ledger_accounts_created_idx;
    drop table payout_lines, payout_batches, business_payments, settlements;
  `.execute(db);
}
