// Kysely types of the tables the first migration creates, and the types every table group shares.
import type { ColumnType, Generated } from 'kysely';

/** A nullable column with a null default: selected as `T | null`, optional on insert. */
export type Nullish<T, I = T> = ColumnType<T | null, I | null | undefined, I | null>;
export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type Role = 'CUSTOMER' | 'DRIVER' | 'BUSINESS' | 'COMPANY' | 'ADMIN';
export type AccountStatus = 'ACTIVE' | 'PENDING_APPROVAL' | 'REJECTED' | 'SUSPENDED';
export type VehicleType = 'BIKE' | 'CAR' | 'VAN' | 'TRUCK';
export type OrderType = 'RIDE' | 'PACKAGE_DELIVERY';

export interface CountriesTable {
  id: string;
  code: string;
  name: string;
  currency: string;
  dial_code: string;
  /** The most a package's cash on delivery may be, in the currency's minor unit (migration 0018). */
  cod_max: ColumnType<number, number | undefined, number>;
  /** IANA time zone of the country's days and slots (migration 0025). */
  time_zone: ColumnType<string, string | undefined, string>;
  /** The language of its people when nothing else says (migration 0032, contract section 27). */
  default_locale: ColumnType<string, string | undefined, string>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface UsersTable {
  id: string;
  email: string;
  phone: string;
  password_hash: string;
  first_name: string;
  last_name: string;
  role: Role;
  status: AccountStatus;
  status_reason: string | null;
  country_id: string | null;
  /** en, sw or fr; null: the browser's or the country's (migration 0032). */
  locale: ColumnType<string | null, string | null | undefined, string | null>;
  is_email_verified: Generated<boolean>;
  is_phone_verified: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface BusinessProfilesTable {
  user_id: string;
  business_name: string;
  business_address: string | null;
  updated_at: Generated<Date>;
}

export interface CompanyProfilesTable {
  user_id: string;
  company_name: string;
  updated_at: Generated<Date>;
}

export interface DriverProfilesTable {
  user_id: string;
  vehicle_type: VehicleType;
  vehicle_plate: string;
  company_id: string | null;
  service_types: Generated<OrderType[]>;
  availability: Generated<'ONLINE' | 'OFFLINE'>;
  rating: Nullish<number>;
  /** How many ratings the driver received (migration 0019; `rating` is the average of the last 500). */
  rating_count: Generated<number>;
  last_lat: Nullish<number>;
  last_lng: Nullish<number>;
  last_heading: Nullish<number>;
  last_speed: Nullish<number>;
  last_location_at: Nullish<Date, Date | string>;
  active_job_type: Nullish<'PACKAGE' | 'RIDE'>;
  active_job_id: Nullish<string>;
  /** Section 24 (migration 0030): how many jobs the driver may hold at once (1–20) and holds now. */
  max_active_jobs: Generated<number>;
  active_jobs: Generated<number>;
  updated_at: Generated<Date>;
}

export interface AuthSessionsTable {
  id: string;
  user_id: string;
  refresh_token_hash: string;
  remember_me: boolean;
  expires_at: Date;
  revoked_at: Date | null;
  created_at: Generated<Date>;
  last_used_at: Date | null;
}

export interface FoundationTables {
  countries: CountriesTable;
  users: UsersTable;
  business_profiles: BusinessProfilesTable;
  company_profiles: CompanyProfilesTable;
  driver_profiles: DriverProfilesTable;
  auth_sessions: AuthSessionsTable;
}
