// Business invoices (see src/db/migrations/0023_invoices.ts).
import type { ColumnType } from 'kysely';

export interface InvoicesTable {
  id: string;
  seq: number;
  number: string;
  business_id: string;
  /** The first day of the month, UTC ('2026-10-01'). */
  month: ColumnType<Date | string, string, string>;
  currency: string;
  business_name: string;
  business_address: string | null;
  opening_balance: number;
  closing_balance: number;
  /** jsonb: written as JSON text, read as the object. */
  totals: ColumnType<unknown, string, string>;
  lines: ColumnType<unknown, string, string>;
  line_count: number;
  created_at: ColumnType<Date, Date, Date>;
}

export interface InvoiceTables {
  invoices: InvoicesTable;
}
