// Windows and booking ahead (contract section 22), pure: no database, no clock (the caller passes now).
// Packages, rides, quotes and recurring templates share these rules and their 400s naming the field.
import { badRequest } from '../../shared/errors.js';

/** A window as the API takes it: RFC 3339 instants (UTC on the wire). */
export interface TimeWindowInput {
  start: string;
  end: string;
}

/** What a package (or a quote, or a recurring template's occurrence) says about time. */
export interface WindowsInput {
  pickupWindow?: TimeWindowInput;
  dropoffWindow?: TimeWindowInput;
  timeZone?: string;
}

export interface TimeWindow {
  start: Date;
  end: Date;
}

export interface Windows {
  pickupWindow: TimeWindow | null;
  dropoffWindow: TimeWindow | null;
  timeZone: string | null;
}

export interface WindowRules {
  /** MIN_WINDOW */
  minWindowMs: number;
  /** SCHEDULE_MAX_AHEAD */
  maxAheadMs: number;
}

export interface RideRules {
  /** RIDE_SCHEDULE_MIN_AHEAD */
  rideMinAheadMs: number;
  /** SCHEDULE_MAX_AHEAD */
  maxAheadMs: number;
}

const MINUTE = 60_000;

const zones = new Map<string, boolean>();

/** Whether `zone` is an IANA time zone this runtime knows (Intl's own list and its aliases). */
export function isTimeZone(zone: string): boolean {
  let known = zones.get(zone);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat('en', { timeZone: zone });
      // Intl also takes offsets such as +03:00: only named zones are IANA zones.
      known = /^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/.test(zone);
    } catch {
      known = false;
    }
    if (zones.size < 1000) zones.set(zone, known);
  }
  return known;
}

/** 400 VALIDATION_FAILED naming the field when `zone` is not an IANA time zone. */
export function checkTimeZone(zone: string | undefined, field: string): string | null {
  if (zone === undefined) return null;
  if (!isTimeZone(zone)) throw badRequest(`${field} must be an IANA time zone such as Africa/Nairobi (got "${zone}")`);
  return zone;
}

function instant(text: string, field: string): Date {
  // RFC 3339 with a zone (Z or an offset): a bare local time would mean a different instant per server.
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw badRequest(`${field} must be an RFC 3339 instant such as 2026-05-01T09:00:00Z`);
  return new Date(ms);
}

const minutes = (ms: number) => (ms % MINUTE === 0 ? `${ms / MINUTE} minutes` : `${ms / 1000} seconds`);

function window(input: TimeWindowInput, field: string, nowMs: number, rules: WindowRules): TimeWindow {
  const start = instant(input.start, `${field}.start`);
  const end = instant(input.end, `${field}.end`);
  if (end.getTime() <= start.getTime()) throw badRequest(`${field}.end must be after ${field}.start`);
  if (end.getTime() - start.getTime() < rules.minWindowMs)
    throw badRequest(`${field} must be at least ${minutes(rules.minWindowMs)} long (MIN_WINDOW)`);
  if (end.getTime() <= nowMs) throw badRequest(`${field}.end must not be in the past`);
  if (start.getTime() > nowMs + rules.maxAheadMs)
    throw badRequest(`${field}.start must be at most ${minutes(rules.maxAheadMs)} ahead (SCHEDULE_MAX_AHEAD)`);
  return { start, end };
}

/**
 * The windows of a package (or a quote): each optional, checked by section 22's rules, 400
 * VALIDATION_FAILED naming the field (`prefix.pickupWindow.end`...) otherwise.
 */
export function validateWindows(input: WindowsInput, nowMs: number, rules: WindowRules, prefix = 'body'): Windows {
  const pickupWindow = input.pickupWindow ? window(input.pickupWindow, `${prefix}.pickupWindow`, nowMs, rules) : null;
  const dropoffWindow = input.dropoffWindow
    ? window(input.dropoffWindow, `${prefix}.dropoffWindow`, nowMs, rules)
    : null;
  if (pickupWindow && dropoffWindow && dropoffWindow.end.getTime() < pickupWindow.end.getTime())
    throw badRequest(`${prefix}.dropoffWindow.end must not be before ${prefix}.pickupWindow.end`);
  return { pickupWindow, dropoffWindow, timeZone: checkTimeZone(input.timeZone, `${prefix}.timeZone`) };
}

/** A ride's scheduledAt: at least RIDE_SCHEDULE_MIN_AHEAD and at most SCHEDULE_MAX_AHEAD ahead. */
export function validateScheduledAt(
  scheduledAt: string | undefined,
  nowMs: number,
  rules: RideRules,
  field = 'body.scheduledAt',
): Date | null {
  if (scheduledAt === undefined) return null;
  const at = instant(scheduledAt, field);
  if (at.getTime() < nowMs + rules.rideMinAheadMs)
    throw badRequest(`${field} must be at least ${minutes(rules.rideMinAheadMs)} ahead (RIDE_SCHEDULE_MIN_AHEAD)`);
  if (at.getTime() > nowMs + rules.maxAheadMs)
    throw badRequest(`${field} must be at most ${minutes(rules.maxAheadMs)} ahead (SCHEDULE_MAX_AHEAD)`);
  return at;
}

/** When a scheduled job's work starts: the pickup window's start, else the drop-off window's (null: ASAP). */
export function scheduledStart(w: Pick<Windows, 'pickupWindow' | 'dropoffWindow'>): Date | null {
  return w.pickupWindow?.start ?? w.dropoffWindow?.start ?? null;
}

/** A window as the API shows it. */
export function windowView(start: Date | null | undefined, end: Date | null | undefined): TimeWindowInput | null {
  return start && end ? { start: new Date(start).toISOString(), end: new Date(end).toISOString() } : null;
}
