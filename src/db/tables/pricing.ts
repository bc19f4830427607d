// Tariffs and quotes (see src/db/migrations/0010_pricing.ts).
import type { ColumnType, Generated } from 'kysely';
import type { Nullish, VehicleType } from './foundation.js';

export type QuoteKind = 'PACKAGE' | 'RIDE';

export interface TariffsTable {
  country_id: string;
  vehicle_type: VehicleType;
  base: number;
  per_km: number;
  per_minute: number;
  minimum: number;
  booking_fee: number;
  cancellation_fee: number;
  /** Basis points of (amount − booking fee) that are the operator's commission (migration 0018). */
  commission_rate: Generated<number>;
  /** Basis points of a return's trip part (migration 0029; 10000 = 100 %). */
  return_rate: Generated<number>;
  version: Generated<number>;
  updated_by: Nullish<string>;
  updated_at: Generated<Date>;
}

export interface QuotesTable {
  id: string;
  account_id: string;
  kind: QuoteKind;
  pickup_lat: number;
  pickup_lng: number;
  dropoff_lat: number;
  dropoff_lng: number;
  vehicle_type: VehicleType;
  country_id: string;
  amount: number;
  currency: string;
  /** jsonb: written as JSON text, read as the object. */
  breakdown: ColumnType<unknown, string, string>;
  tariff_version: number;
  surge: number;
  inputs: ColumnType<unknown, string, string>;
  created_at: ColumnType<Date, Date, Date>;
  expires_at: ColumnType<Date, Date, Date>;
  consumed_at: Nullish<Date>;
}

export interface PricingTables {
  tariffs: TariffsTable;
  quotes: QuotesTable;
}
