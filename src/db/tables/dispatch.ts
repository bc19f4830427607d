// Kysely types of the dispatch tables (src/db/migrations/0009_dispatch).
import type { Generated } from 'kysely';
import type { VehicleType } from './foundation.js';

export type JobTypeName = 'PACKAGE' | 'RIDE';
export type DispatchJobState = 'SCHEDULED' | 'SEARCHING' | 'OFFERED' | 'NO_DRIVERS' | 'DONE';
export type OfferState = 'OPEN' | 'ACCEPTED' | 'DECLINED' | 'LAPSED' | 'WITHDRAWN';

export interface DispatchJobsTable {
  job_id: string;
  job_type: JobTypeName;
  state: DispatchJobState;
  attempts: number;
  vehicle_type: VehicleType;
  pickup_lat: number;
  pickup_lng: number;
  next_attempt_at: Date;
  created_at: Date;
  updated_at: Date;
  /** Scheduled jobs (migration 0025, contract section 22): the promised start and the lead it enters dispatch by. */
  scheduled_start?: Date | null;
  lead_seconds?: number | null;
  lead_samples?: number | null;
  entered_at?: Date | null;
  notify_at?: Date | null;
  notified_at?: Date | null;
}

export interface DispatchOffersTable {
  id: string;
  /** The order offers were made in (the clock may give two the same instant). */
  seq: Generated<string>;
  job_type: JobTypeName;
  job_id: string;
  driver_id: string;
  state: OfferState;
  /** The Offer as the driver sees it (without id, state). */
  offer: unknown;
  /** Why this driver: ETA, distance, radius, candidates, the ones skipped. */
  choice: unknown;
  created_at: Date;
  expires_at: Date;
  answered_at: Date | null;
}

export interface DispatchReleasesTable {
  job_id: string;
  driver_id: string;
  reason: string | null;
  actor_id: string | null;
  at: Date;
}

export interface DispatchTables {
  dispatch_jobs: DispatchJobsTable;
  dispatch_offers: DispatchOffersTable;
  dispatch_releases: DispatchReleasesTable;
}
