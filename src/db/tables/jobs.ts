// Kysely types of the job tables: packages, rides and their status history (see src/db/migrations/0004).
import type { ColumnType, Generated } from 'kysely';
import type { Nullish, VehicleType } from './foundation.js';
import type { JobPaymentState } from './mpesa.js';

export type PackageStatus = 'PENDING' | 'ASSIGNED' | 'PICKED_UP' | 'IN_TRANSIT' | 'DELIVERED' | 'FAILED' | 'CANCELLED';
export type RideStatus = 'REQUESTED' | 'ACCEPTED' | 'ARRIVED' | 'IN_PROGRESS' | 'COMPLETED' | 'CANCELLED' | 'EXPIRED';

export interface StopJson {
  location: { lat: number; lng: number };
  address: string;
  contactName: string;
  contactPhone: string;
  notes?: string;
  /** The drop-off contact's language (migration 0032: JSON only). */
  contactLocale?: 'en' | 'sw' | 'fr';
}

export interface ParcelJson {
  description: string;
  weightKg?: number;
  size?: 'SMALL' | 'MEDIUM' | 'LARGE';
}

export interface PackagesTable extends JobPriceColumns {
  id: string;
  status: PackageStatus;
  vehicle_type: VehicleType;
  country_id: string;
  created_by: string;
  business_id: string | null;
  customer_id: string | null;
  driver_id: string | null;
  reference: string | null;
  pickup: StopJson | string;
  dropoff: StopJson | string;
  parcel: ParcelJson | string;
  pickup_lat: number;
  pickup_lng: number;
  delivery_code_hash: string | null;
  delivery_code_attempts: Generated<number>;
  recipient_name: string | null;
  created_at: Date;
  updated_at: Date;
  /** The status history as the API shows it: package_status_history's rows, appended by a trigger (migration 0006). */
  status_history: ColumnType<StatusHistoryItemJson[], string | undefined, never>;
  /** When it reached DELIVERED, FAILED or CANCELLED (statements). */
  finished_at: Nullish<Date>;
  /** The tracking token is HMAC(secret, id.nonce); only its SHA-256 is stored (migration 0012). */
  tracking_nonce: ColumnType<string, string | undefined, string>;
  tracking_token_hash: string | null;
  notify_recipient: ColumnType<boolean, boolean | undefined, boolean>;
  /** Cash on delivery the driver collects for the business (migration 0018). */
  cod_amount: Nullish<number>;
  /** Proof of delivery (migration 0022): what delivering needs, and what the driver sent. */
  /** text[]: written as an array literal ('{PHOTO}'), read as the array. */
  proof_required: ColumnType<ProofKind[] | string, string | undefined, string>;
  proof_photo_key: Nullish<string>;
  proof_signature_key: Nullish<string>;
  proof_recipient_name: Nullish<string>;
  proof_at: Nullish<Date>;
  /** Windows and the job's own time zone (migration 0025, contract section 22); null: ASAP. */
  pickup_window_start: Nullish<Date>;
  pickup_window_end: Nullish<Date>;
  dropoff_window_start: Nullish<Date>;
  dropoff_window_end: Nullish<Date>;
  time_zone: Nullish<string>;
  /** Failed deliveries (migration 0029, contract section 23): the reason code of a FAILED package. */
  fail_reason_code: Nullish<FailReasonCode>;
  /** The failed package this one re-attempts. */
  previous_attempt_id: Nullish<string>;
  /** The failed package this one returns to its pickup. */
  return_of: Nullish<string>;
  /** The re-attempt or return created from this (failed) package; at most one. */
  follow_up_id: Nullish<string>;
  /** Offered to this driver first (who failed the original while holding the parcel). */
  preferred_driver_id: Nullish<string>;
  /** payment_method MPESA only (migration 0031): the payer's phone (E.164) and the payment's state. */
  payment_phone?: Nullish<string>;
  payment_state?: Nullish<JobPaymentState>;
  payment_receipt?: Nullish<string>;
  payment_failure?: Nullish<string>;
}

export const FAIL_REASON_CODES = [
  'NO_ANSWER',
  'ADDRESS_NOT_FOUND',
  'REFUSED',
  'CLOSED',
  'DAMAGED',
  'UNSAFE',
  'OTHER',
] as const;
export type FailReasonCode = (typeof FAIL_REASON_CODES)[number];

export type ProofKind = 'PHOTO' | 'SIGNATURE';

/** The proof images when they are kept in PostgreSQL (no S3_BUCKET). */
export interface ProofObjectsTable {
  key: string;
  content_type: string;
  data: Uint8Array;
  created_at: Date;
}

/** The price columns both kinds of job have (migration 0011); null on jobs created before prices existed. */
export interface JobPriceColumns {
  price_amount: Nullish<number>;
  price_currency: Nullish<string>;
  quote_id: Nullish<string>;
  tariff_version: Nullish<number>;
  surge: Nullish<number>;
  /** jsonb: written as JSON text, read as the object. */
  price_breakdown: Nullish<unknown, string>;
  price_inputs: Nullish<unknown, string>;
  cancellation_fee: Nullish<number>;
  /** CASH (the driver collects) or ACCOUNT (the business is invoiced), migration 0018. */
  payment_method: ColumnType<PaymentMethod, PaymentMethod | undefined, PaymentMethod>;
  /** The tariff's commission rate (basis points) when the job was created. */
  commission_rate: ColumnType<number, number | undefined, number>;
  /** What the driver confirmed collecting at delivery (cash on delivery) or completion. */
  cash_collected: Nullish<number>;
}

/** MPESA (migration 0031, contract section 26): a customer's package paid by STK Push before dispatch. */
export type PaymentMethod = 'CASH' | 'ACCOUNT' | 'MPESA';

export interface StatusHistoryItemJson {
  status: string;
  at: string;
  reason?: string;
  /** A FAILED item's reason code (packages, migration 0029). */
  reasonCode?: string;
}

export interface StatusHistoryTable<S> {
  id: Generated<number>;
  status: S;
  reason: string | null;
  actor_id: string | null;
  at: Date;
}

export interface RidesTable extends JobPriceColumns {
  id: string;
  status: RideStatus;
  customer_id: string;
  driver_id: string | null;
  vehicle_type: VehicleType;
  country_id: string;
  pickup_lat: number;
  pickup_lng: number;
  destination_lat: number;
  destination_lng: number;
  created_at: Date;
  updated_at: Date;
  status_history: ColumnType<StatusHistoryItemJson[], string | undefined, never>;
  fare_amount: Nullish<number>;
  /** The final fare's breakdown, the actual distance and time, and whether the cap applied. */
  fare_detail: Nullish<unknown, string>;
  /** A ride booked ahead (migration 0025, contract section 22): the driver is to be at the pickup then. */
  scheduled_at: Nullish<Date>;
  time_zone: Nullish<string>;
}

/** The positions a ride's driver reported while it was IN_PROGRESS (written behind with the driver's position). */
export interface RidePositionsTable {
  ride_id: string;
  lat: number;
  lng: number;
  at: Date;
}

export interface JobTables {
  packages: PackagesTable;
  proof_objects: ProofObjectsTable;
  package_status_history: StatusHistoryTable<PackageStatus> & { package_id: string; reason_code?: string | null };
  rides: RidesTable;
  ride_status_history: StatusHistoryTable<RideStatus> & { ride_id: string };
  ride_positions: RidePositionsTable;
}
