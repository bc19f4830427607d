// Time (contract section 22): windows, booking ahead, the lead of scheduled dispatch, CLOCK_RATE.
import type { EnvReader } from './env-reader.js';
import type { ServerConfig } from './server.js';

export interface SchedulingConfig {
  /** MIN_WINDOW: the shortest pickup or drop-off window. */
  minWindowMs: number;
  /** SCHEDULE_MAX_AHEAD: how far ahead a window may start (or a ride be booked). */
  maxAheadMs: number;
  /** RIDE_SCHEDULE_MIN_AHEAD: a booked ride's scheduledAt is at least this far ahead. */
  rideMinAheadMs: number;
  /** DISPATCH_LEAD_DEFAULT: the lead when an area has fewer than 20 accept-to-arrival samples in 7 days. */
  leadDefaultMs: number;
  /** DISPATCH_LEAD_BUFFER: added to every lead. */
  leadBufferMs: number;
  /** CLOCK_RATE: the service's clock and the scheduler's timers run this many times faster (1: real time; never in production). */
  clockRate: number;
  /** CLOCK_ANCHOR: the real instant (RFC 3339) from which the clock runs CLOCK_RATE times faster; null: each process's start. */
  clockAnchorMs: number | null;
}

export function readScheduling(r: EnvReader, server: ServerConfig): SchedulingConfig {
  return {
    minWindowMs: r.duration('MIN_WINDOW', '30m', '1d'),
    maxAheadMs: r.duration('SCHEDULE_MAX_AHEAD', '30d', '366d'),
    rideMinAheadMs: r.duration('RIDE_SCHEDULE_MIN_AHEAD', '30m', '1d'),
    leadDefaultMs: r.duration('DISPATCH_LEAD_DEFAULT', '20m', '1d'),
    leadBufferMs: r.duration('DISPATCH_LEAD_BUFFER', '5m', '1d'),
    clockRate: readClockRate(r, server),
    clockAnchorMs: readClockAnchor(r),
  };
}

function readClockRate(r: EnvReader, server: ServerConfig): number {
  const raw = r.get('CLOCK_RATE');
  if (raw === undefined) return 1;
  const rate = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : NaN;
  if (!(rate >= 1 && rate <= 10_000)) {
    r.problem(`CLOCK_RATE must be a number from 1 to 10000 (got "${raw}")`);
    return 1;
  }
  if (rate !== 1 && server.isProduction) {
    r.problem('CLOCK_RATE is for tests and the simulator only: it is refused when NODE_ENV=production');
    return 1;
  }
  return rate;
}

function readClockAnchor(r: EnvReader): number | null {
  const raw = r.get('CLOCK_ANCHOR');
  if (raw === undefined) return null;
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) {
    r.problem(`CLOCK_ANCHOR must be an RFC 3339 instant such as 2026-05-01T00:00:00Z (got "${raw}")`);
    return null;
  }
  return ms;
}
