// The ledger (see src/db/migrations/0016_ledger.ts).
import type { ColumnType, Generated } from 'kysely';
import type { Nullish } from './foundation.js';

export type PartyAccountKind = 'DRIVER' | 'BUSINESS' | 'CUSTOMER';
export type OperatorAccountKind = 'OPERATOR_COMMISSION' | 'OPERATOR_BOOKING_FEES' | 'OPERATOR_CASH' | 'OPERATOR_BANK' | 'PAYOUTS_CLEARING';
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

export interface LedgerTables {
  ledger_accounts: LedgerAccountsTable;
  ledger_transactions: LedgerTransactionsTable;
  ledger_entries: LedgerEntriesTable;
  ledger_balance_deltas: LedgerBalanceDeltasTable;
}
