// Kysely types of recurring jobs and their occurrences (see src/db/migrations/0026_recurring_jobs.ts).
import type { ColumnType } from 'kysely';
import type { Nullish } from './foundation.js';

export type RecurringState = 'ACTIVE' | 'PAUSED';
export type OccurrenceState = 'CREATED' | 'SKIPPED' | 'PAUSED' | 'FAILED';

export interface RecurringJobsTable {
  id: string;
  business_id: string;
  rule: string;
  time_zone: string;
  template: ColumnType<unknown, string, string>;
  state: RecurringState;
  paused_until: Nullish<Date>;
  created_at: ColumnType<Date, Date, never>;
  updated_at: Date;
}

export interface RecurringOccurrencesTable {
  recurring_job_id: string;
  occurrence_local: string;
  occurs_at: Date;
  state: OccurrenceState;
  package_id: Nullish<string>;
  pickup_start: Nullish<Date>;
  pickup_end: Nullish<Date>;
  dropoff_start: Nullish<Date>;
  dropoff_end: Nullish<Date>;
  error: Nullish<string>;
  created_at: ColumnType<Date, Date, never>;
}

export interface RecurringTables {
  recurring_jobs: RecurringJobsTable;
  recurring_occurrences: RecurringOccurrencesTable;
}
