// M-Pesa collections by STK Push (contract section 26): a customer's package paid by M-Pesa, each
// prompt sent for it (a retry is a new one), the B2C refund of a paid package cancelled or failed,
// and their callbacks stored with the others (mpesa_callbacks).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    alter table packages drop constraint packages_payment_method_check;
    alter table packages add constraint packages_payment_method_check check (payment_method in ('CASH', 'ACCOUNT', 'MPESA'));
    -- Only for payment_method MPESA: the payer's phone (E.164) and where the payment stands.
    alter table packages add column payment_phone text;
    alter table packages add column payment_state text
      check (payment_state in ('PENDING', 'PAID', 'FAILED', 'CANCELLED', 'REFUNDED'));
    -- The M-Pesa receipt once paid, and why the last prompt failed (Daraja's ResultDesc).
    alter table packages add column payment_receipt text;
    alter table packages add column payment_failure text;
    create index packages_payment_pending_idx on packages (created_at) where payment_state in ('PENDING', 'FAILED');

    create table mpesa_stk_payments (
      id uuid primary key,
      job_type text not null check (job_type in ('PACKAGE', 'RIDE')),
      job_id uuid not null,
      -- Whole shillings, as asked for.
      amount bigint not null check (amount > 0),
      -- Daraja's form: 2547XXXXXXXX.
      phone text not null,
      -- SHA-256 of the callback URL's token; the token itself is never stored.
      token_hash text not null unique,
      -- QUEUED (committed, not yet sent) → SENT (Daraja took it: CheckoutRequestID) → PAID | FAILED.
      state text not null check (state in ('QUEUED', 'SENT', 'PAID', 'FAILED')),
      merchant_request_id text,
      checkout_request_id text unique,
      receipt text unique,
      result_code text,
      result_desc text,
      transaction_id uuid,
      attempts int not null default 0,
      queries int not null default 0,
      created_at timestamptz not null,
      sent_at timestamptz,
      queried_at timestamptz,
      result_at timestamptz
    );
    -- One prompt on its way per job at a time.
    create unique index mpesa_stk_payments_live_idx on mpesa_stk_payments (job_id) where state in ('QUEUED', 'SENT');
    create index mpesa_stk_payments_work_idx on mpesa_stk_payments (state, sent_at) where state in ('QUEUED', 'SENT');

    -- A paid job cancelled or failed: its money goes back to the payer by B2C (one refund per job).
    create table mpesa_refunds (
      id uuid primary key,
      job_type text not null check (job_type in ('PACKAGE', 'RIDE')),
      job_id uuid not null unique,
      stk_payment_id uuid not null references mpesa_stk_payments(id),
      amount bigint not null check (amount > 0),
      phone text not null,
      originator_conversation_id text not null unique,
      conversation_id text,
      token_hash text not null unique,
      state text not null check (state in ('QUEUED', 'SENT', 'UNKNOWN', 'PAID', 'FAILED')),
      attempts int not null default 0,
      receipt text unique,
      result_code text,
      result_desc text,
      transaction_id uuid,
      created_at timestamptz not null,
      sent_at timestamptz,
      result_at timestamptz
    );
    create index mpesa_refunds_work_idx on mpesa_refunds (state, sent_at) where state in ('QUEUED', 'SENT');

    alter table mpesa_callbacks drop constraint mpesa_callbacks_kind_check;
    alter table mpesa_callbacks add constraint mpesa_callbacks_kind_check check (kind in ('B2C_RESULT', 'B2C_TIMEOUT',
      'STATUS_RESULT', 'STATUS_TIMEOUT', 'STK_RESULT', 'REFUND_RESULT', 'REFUND_TIMEOUT'));
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    delete from mpesa_callbacks where kind in ('STK_RESULT', 'REFUND_RESULT', 'REFUND_TIMEOUT');
    alter table mpesa_callbacks drop constraint mpesa_callbacks_kind_check;
    alter table mpesa_callbacks add constraint mpesa_callbacks_kind_check
      check (kind in ('B2C_RESULT', 'B2C_TIMEOUT', 'STATUS_RESULT', 'STATUS_TIMEOUT'));
    drop table mpesa_refunds, mpesa_stk_payments;
    drop index packages_payment_pending_idx;
    alter table packages drop column payment_state, drop column payment_phone, drop column payment_receipt, drop column payment_failure;
    update packages set payment_method = 'ACCOUNT' where payment_method = 'MPESA';
    alter table packages drop constraint packages_payment_method_check;
    alter table packages add constraint packages_payment_method_check check (payment_method in ('CASH', 'ACCOUNT'));
  `.execute(db);
}
