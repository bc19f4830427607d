// The ledger (see src/db/migrations/0016_ledger.ts).
import type { ColumnType, Generated } from 'kysely';
import type { Nullish } from './foundation.js';

export type PartyAccountKind = 'DRIVER' | 'BUSINESS' | 'CUSTOMER';
export type OperatorAccountKind =
  | 'OPERATOR_COMMISSION'
  | 'OPERATOR_BOOKING_FEES'
  | 'OPERATOR_CASH'
  | 'OPERATOR_BANK'
  | 'PAYOUTS_CLEARING'
  /** The operator's M-Pesa shortcode (section 26): what M-Pesa paid out from it or into it. */
  | 'MPESA';
export type LedgerAccountKind = PartyAccountKind | OperatorAccountKind;

export interface LedgerAccountsTable {
  id: string;
  kind: LedgerAccountKind;
  party_id: string | null;
  currency: string;
  balance: Generated<number>;
  created_at: ColumnType<Date, Date, Date>;
  updated_at: ColumnType<Date, Date, Date>;
}

export interface LedgerTransactionsTable {
  id: string;
  source_key: string;
  currency: string;
  memo: Nullish<string>;
  created_at: ColumnType<Date, Date, Date>;
}

export interface LedgerEntriesTable {
  id: Generated<number>;
  transaction_id: string;
  account_id: string;
  amount: number;
  code: string;
  created_at: ColumnType<Date, Date, Date>;
}

export interface LedgerBalanceDeltasTable {
  id: Generated<number>;
  account_id: string;
  amount: number;
}

/** The ledger's tables with those of 0017 (settlements, payouts): schema.ts joins this group. */
export interface LedgerTables extends PayoutTables {
  ledger_accounts: LedgerAccountsTable;
  ledger_transactions: LedgerTransactionsTable;
  ledger_entries: LedgerEntriesTable;
  ledger_balance_deltas: LedgerBalanceDeltasTable;
}

// Settlements, business payments and payout batches (see src/db/migrations/0017_payouts.ts).

export interface SettlementsTable {
  id: string;
  driver_id: string;
  amount: number;
  currency: string;
  reference: string;
  recorded_by: string;
  transaction_id: string;
  created_at: ColumnType<Date, Date, Date>;
}

export interface BusinessPaymentsTable {
  id: string;
  business_id: string;
  amount: number;
  currency: string;
  reference: string;
  recorded_by: string;
  transaction_id: string;
  created_at: ColumnType<Date, Date, Date>;
}

export type PayoutBatchStatus = 'OPEN' | 'CLOSED';
/** SENT and UNKNOWN: a line on its way by M-Pesa B2C (section 26). */
export type PayoutLineStatus = 'OPEN' | 'SENT' | 'UNKNOWN' | 'PAID' | 'FAILED';

export interface PayoutBatchesTable {
  id: string;
  number: Generated<number>;
  currency: string;
  minimum: number;
  status: PayoutBatchStatus;
  line_count: number;
  total: number;
  created_by: string;
  created_at: ColumnType<Date, Date, Date>;
  closed_at: Nullish<Date>;
  /** Why M-Pesa sending stopped (0027). */
  mpesa_stopped: Nullish<string>;
}

export interface PayoutLinesTable {
  id: string;
  batch_id: string;
  seq: number;
  account_id: string;
  party_kind: 'DRIVER' | 'BUSINESS';
  party_id: string;
  name: string;
  phone: string;
  amount: number;
  status: PayoutLineStatus;
  failure_reason: Nullish<string>;
  transaction_id: string;
  closing_transaction_id: Nullish<string>;
  created_at: ColumnType<Date, Date, Date>;
  closed_at: Nullish<Date>;
}

export interface PayoutTables {
  settlements: SettlementsTable;
  business_payments: BusinessPaymentsTable;
  payout_batches: PayoutBatchesTable;
  payout_lines: PayoutLinesTable;
}
