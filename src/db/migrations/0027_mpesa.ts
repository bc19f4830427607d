// M-Pesa (contract section 26): the operator's MPESA account, B2C payments of payout lines (a line
// above Daraja's maximum is several), the Transaction Status queries about them, and every
// callback stored before it is answered.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table ledger_accounts drop constraint ledger_accounts_kind_check;
    alter table ledger_accounts add constraint ledger_accounts_kind_check check (kind in ('DRIVER', 'BUSINESS', 'CUSTOMER',
      'OPERATOR_COMMISSION', 'OPERATOR_BOOKING_FEES', 'OPERATOR_CASH', 'OPERATOR_BANK', 'PAYOUTS_CLEARING', 'MPESA'));

    -- SENT: handed to M-Pesa; UNKNOWN: no result (timeout, none came): never sent again automatically.
    alter table payout_lines drop constraint payout_lines_status_check;
    alter table payout_lines add constraint payout_lines_status_check
      check (status in ('OPEN', 'SENT', 'UNKNOWN', 'PAID', 'FAILED'));
    -- An account whose line is still on its way is left out of the next batch, as an OPEN one is.
    drop index payout_lines_open_account_idx;
    create unique index payout_lines_open_account_idx on payout_lines (account_id) where status in ('OPEN', 'SENT', 'UNKNOWN');
    -- Why sending stopped (an insufficient float): the rest of the batch stays OPEN until sent again.
    alter table payout_batches add column mpesa_stopped text;

    create table mpesa_b2c_payments (
      id uuid primary key,
      batch_id uuid not null references payout_batches(id),
      line_id uuid not null,
      part int not null,
      -- Whole shillings, as sent.
      amount bigint not null check (amount > 0),
      phone text not null,
      -- Stable per line and part: B2C v3 refuses a second request with it, so a line is never paid twice.
      originator_conversation_id text not null unique,
      conversation_id text,
      -- SHA-256 of the result URL's token; the token itself is never stored.
      token_hash text not null unique,
      state text not null check (state in ('QUEUED', 'SENT', 'UNKNOWN', 'PAID', 'FAILED')),
      attempts int not null default 0,
      receipt text unique,
      result_code text,
      result_desc text,
      transaction_id uuid,
      sent_at timestamptz,
      result_at timestamptz,
      status_asked_at timestamptz,
      status_asks int not null default 0,
      created_at timestamptz not null,
      unique (line_id, part)
    );
    create index mpesa_b2c_payments_work_idx on mpesa_b2c_payments (state, sent_at) where state in ('QUEUED', 'SENT', 'UNKNOWN');
    create index mpesa_b2c_payments_batch_idx on mpesa_b2c_payments (batch_id);

    create table mpesa_status_queries (
      id uuid primary key,
      payment_id uuid not null references mpesa_b2c_payments(id),
      token_hash text not null unique,
      -- Daraja's ids of the query itself (its Result carries them).
      originator_conversation_id text,
      conversation_id text,
      asked_at timestamptz not null,
      answered_at timestamptz,
      result_code text
    );
    create index mpesa_status_queries_payment_idx on mpesa_status_queries (payment_id);

    -- Every callback, committed before its 200, worked after; the key makes a repeat a no-op.
    create table mpesa_callbacks (
      id uuid primary key,
      dedupe_key text not null unique,
      kind text not null check (kind in ('B2C_RESULT', 'B2C_TIMEOUT', 'STATUS_RESULT', 'STATUS_TIMEOUT')),
      token_hash text not null,
      body jsonb not null,
      received_at timestamptz not null,
      processed_at timestamptz,
      -- BOOKED, FAILED, UNKNOWN, DUPLICATE, MISMATCH, NOT_FOUND...: what working it did.
      outcome text
    );
    create index mpesa_callbacks_unprocessed_idx on mpesa_callbacks (received_at) where processed_at is null;
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    drop table mpesa_callbacks, mpesa_status_queries, mpesa_b2c_payments;
    alter table payout_batches drop column mpesa_stopped;
    drop index payout_lines_open_account_idx;
    create unique index payout_lines_open_account_idx on payout_lines (account_id) where status = 'OPEN';
    alter table payout_lines drop constraint payout_lines_status_check;
    alter table payout_lines add constraint payout_lines_status_check check (status in ('OPEN', 'PAID', 'FAILED'));
    alter table ledger_accounts drop constraint ledger_accounts_kind_check;
    alter table ledger_accounts add constraint ledger_accounts_kind_check check (kind in ('DRIVER', 'BUSINESS', 'CUSTOMER',
      'OPERATOR_COMMISSION', 'OPERATOR_BOOKING_FEES', 'OPERATOR_CASH', 'OPERATOR_BANK', 'PAYOUTS_CLEARING'));
  `.execute(db);
}
