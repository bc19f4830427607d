// A job's fields as the API shows them, shared by packages and rides: status, driver, history and dispatch state.
import type { StatusHistoryItemJson } from '../../db/tables/jobs.js';
import { json } from '../../db/json.js';
import type { AuthContext } from '../../shared/auth-context.js';
import { toDriverSummary, type DriverSummaryRow } from './driver-claims.js';

import type { DispatchState, JobRow } from './lifecycle-types.js';

/** The job's `dispatch` field: its dispatch row's state while it waits, DONE once it left dispatch, OFF without one. */
export function dispatchField(
  waiting: boolean,
  state: string | null,
  attempts: number | null,
): { state: DispatchState; attempts: number } {
  const known = state !== null;
  const shown: DispatchState = waiting
    ? known && state !== 'DONE'
      ? (state as DispatchState)
      : 'OFF'
    : known
      ? 'DONE'
      : 'OFF';
  return { state: shown, attempts: attempts ?? 0 };
}

export function jobFields<S extends string>(
  row: JobRow<S> &
    DriverSummaryRow & {
      country_id: string;
      status_history: StatusHistoryItemJson[] | string;
      created_at: Date;
      updated_at: Date;
      dispatch_state: string | null;
      dispatch_attempts: number | null;
    },
  waitingStatus: S,
) {
  return {
    id: row.id,
    status: row.status,
    vehicleType: row.vehicle_type,
    countryId: row.country_id,
    driver: toDriverSummary(row),
    statusHistory: json<StatusHistoryItemJson[]>(row.status_history),
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    dispatch: dispatchField(row.status === waitingStatus, row.dispatch_state, row.dispatch_attempts),
  };
}

/** The assigned driver, or the company it drives for: the driver's side of a job. */
export function isDriverSide(
  row: { driver_id: string | null; driver_company_id: string | null },
  auth: AuthContext,
): boolean {
  if (auth.userId === row.driver_id) return true;
  return auth.role === 'COMPANY' && row.driver_id !== null && row.driver_company_id === auth.userId;
}
