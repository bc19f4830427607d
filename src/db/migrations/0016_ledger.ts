// The double-entry ledger of contract section 21: accounts per party (or operator purpose) and
// currency, immutable transactions with a unique source key, and their signed entries.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table ledger_accounts (
      id uuid primary key,
      kind text not null check (kind in ('DRIVER', 'BUSINESS', 'CUSTOMER',
        'OPERATOR_COMMISSION', 'OPERATOR_BOOKING_FEES', 'OPERATOR_CASH', 'OPERATOR_BANK', 'PAYOUTS_CLEARING')),
      -- No cascade: an account with history outlives nothing it refers to.
      party_id uuid references users(id),
      currency char(3) not null check (currency ~ '^[A-Z]{3}$'),
      -- What the operator owes the party (negative: the party owes the operator). Kept in the posting
      -- transaction for party accounts; for the operator's (hot) accounts it is the rolled-up part
      -- only, the rest waits in ledger_balance_deltas.
      balance bigint not null default 0,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      check ((party_id is not null) = (kind in ('DRIVER', 'BUSINESS', 'CUSTOMER')))
    ) with (fillfactor = 80);
    create unique index ledger_accounts_party_idx on ledger_accounts (party_id, currency) where party_id is not null;
    create unique index ledger_accounts_operator_idx on ledger_accounts (kind, currency) where party_id is null;
    -- No index on balance: a balance update then stays a HOT update (the fill factor leaves it room),
    -- and a payout batch's one scan of the accounts costs less than every posting keeping an index.

    create table ledger_transactions (
      id uuid primary key,
      -- What caused it (job:PACKAGE:<id>:completed, tip:RIDE:<id>, settlement:<id>...): booked once.
      source_key text not null unique check (length(source_key) between 1 and 200),
      currency char(3) not null,
      memo text,
      created_at timestamptz not null
    );

    -- No foreign keys on the two append-only tables: each would check (and key-share lock) a row per
    -- entry, which tripled the time of a 100,000-line payout batch's inserts. Only LedgerService
    -- writes them, with ids it has just resolved or inserted in the same transaction.
    create table ledger_entries (
      id bigint generated always as identity primary key,
      transaction_id uuid not null,
      account_id uuid not null,
      -- Signed, in minor units: positive credits the account (the operator owes the party more).
      amount bigint not null check (amount <> 0),
      code text not null,
      created_at timestamptz not null
    );
    create index ledger_entries_transaction_idx on ledger_entries (transaction_id);
    create index ledger_entries_account_idx on ledger_entries (account_id, created_at);

    -- The operator's accounts take an entry in nearly every transaction: a balance row updated by
    -- each would serialise all postings on its lock. Their deltas are appended here instead and
    -- folded into the balance later (LedgerService.rollUp); a balance read adds what waits here.
    create table ledger_balance_deltas (
      id bigint generated always as identity primary key,
      account_id uuid not null,
      amount bigint not null
    );
    create index ledger_balance_deltas_account_idx on ledger_balance_deltas (account_id);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table ledger_balance_deltas, ledger_entries, ledger_transactions, ledger_accounts`.execute(db);
}
