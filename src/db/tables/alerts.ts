// Kysely types of the alert tables (src/db/migrations/0028_alerts).
import type { JobTypeName } from './dispatch.js';

export type AlertKind = 'job.at_risk' | 'job.late' | 'offer.unanswered' | 'driver.not_at_pickup' | 'driver.stalled';
export type AlertState = 'OPEN' | 'ACKNOWLEDGED' | 'RESOLVED';

export interface AlertsTable {
  id: string;
  kind: AlertKind;
  job_type: JobTypeName;
  job_id: string;
  driver_id: string | null;
  business_id: string | null;
  raised_at: Date;
  /** jsonb: written as JSON text, read as the object. */
  details: unknown;
  state: AlertState;
  state_by: string | null;
  state_at: Date | null;
}

export interface AlertAuditTable {
  id: string;
  alert_id: string;
  action: 'ACKNOWLEDGE' | 'RESOLVE';
  from_state: AlertState;
  to_state: AlertState;
  actor_id: string;
  actor_role: string;
  at: Date;
}

export interface AlertWatchTable {
  job_type: JobTypeName;
  job_id: string;
  driver_id: string;
  anchor_lat: number | null;
  anchor_lng: number | null;
  anchor_at: Date;
  arrived_at: Date | null;
}

export interface AlertTables {
  alerts: AlertsTable;
  alert_audit: AlertAuditTable;
  alert_watch: AlertWatchTable;
}
