// M-Pesa B2C payments, their Transaction Status queries and stored callbacks (see src/db/migrations/0027_mpesa.ts).
import type { ColumnType, Generated } from 'kysely';
import type { Nullish } from './foundation.js';

export type B2cPaymentState = 'QUEUED' | 'SENT' | 'UNKNOWN' | 'PAID' | 'FAILED';
export type MpesaCallbackKind =
  'B2C_RESULT' | 'B2C_TIMEOUT' | 'STATUS_RESULT' | 'STATUS_TIMEOUT' | 'STK_RESULT' | 'REFUND_RESULT' | 'REFUND_TIMEOUT';
/** An STK Push (migration 0031): QUEUED (committed, not sent), SENT (Daraja took it), then PAID or FAILED. */
export type StkPaymentState = 'QUEUED' | 'SENT' | 'PAID' | 'FAILED';
/** A job's payment as it shows it (contract section 26). */
export type JobPaymentState = 'PENDING' | 'PAID' | 'FAILED' | 'CANCELLED' | 'REFUNDED';

export interface MpesaB2cPaymentsTable {
  id: string;
  batch_id: string;
  line_id: string;
  part: number;
  amount: number;
  phone: string;
  originator_conversation_id: string;
  conversation_id: Nullish<string>;
  token_hash: string;
  state: B2cPaymentState;
  attempts: Generated<number>;
  receipt: Nullish<string>;
  result_code: Nullish<string>;
  result_desc: Nullish<string>;
  transaction_id: Nullish<string>;
  sent_at: Nullish<Date>;
  result_at: Nullish<Date>;
  status_asked_at: Nullish<Date>;
  status_asks: Generated<number>;
  created_at: ColumnType<Date, Date, Date>;
}

export interface MpesaStatusQueriesTable {
  id: string;
  payment_id: string;
  token_hash: string;
  originator_conversation_id: Nullish<string>;
  conversation_id: Nullish<string>;
  asked_at: ColumnType<Date, Date, Date>;
  answered_at: Nullish<Date>;
  result_code: Nullish<string>;
}

export interface MpesaCallbacksTable {
  id: string;
  dedupe_key: string;
  kind: MpesaCallbackKind;
  token_hash: string;
  body: ColumnType<unknown, string, string>;
  received_at: ColumnType<Date, Date, Date>;
  processed_at: Nullish<Date>;
  outcome: Nullish<string>;
}

export interface MpesaStkPaymentsTable {
  id: string;
  job_type: 'PACKAGE' | 'RIDE';
  job_id: string;
  amount: number;
  phone: string;
  token_hash: string;
  state: StkPaymentState;
  merchant_request_id: Nullish<string>;
  checkout_request_id: Nullish<string>;
  receipt: Nullish<string>;
  result_code: Nullish<string>;
  result_desc: Nullish<string>;
  transaction_id: Nullish<string>;
  attempts: Generated<number>;
  queries: Generated<number>;
  created_at: ColumnType<Date, Date, Date>;
  sent_at: Nullish<Date>;
  queried_at: Nullish<Date>;
  result_at: Nullish<Date>;
}

export interface MpesaRefundsTable {
  id: string;
  job_type: 'PACKAGE' | 'RIDE';
  job_id: string;
  stk_payment_id: string;
  amount: number;
  phone: string;
  originator_conversation_id: string;
  conversation_id: Nullish<string>;
  token_hash: string;
  state: B2cPaymentState;
  attempts: Generated<number>;
  receipt: Nullish<string>;
  result_code: Nullish<string>;
  result_desc: Nullish<string>;
  transaction_id: Nullish<string>;
  created_at: ColumnType<Date, Date, Date>;
  sent_at: Nullish<Date>;
  result_at: Nullish<Date>;
}

export interface MpesaTables {
  mpesa_stk_payments: MpesaStkPaymentsTable;
  mpesa_refunds: MpesaRefundsTable;
  mpesa_b2c_payments: MpesaB2cPaymentsTable;
  mpesa_status_queries: MpesaStatusQueriesTable;
  mpesa_callbacks: MpesaCallbacksTable;
}
