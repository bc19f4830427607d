// Recurring rules (contract section 22), pure: an RFC 5545 RRULE read strictly, its occurrences in a
// time zone at the same local (wall-clock) time across daylight-saving changes, and each occurrence's
// windows from the template's offsets. No database, no clock: `from`/`until` are given.
//
// rrule's own TZID support converts through the host's zone; instead its "floating" trick is used on
// purpose and on its own: the rule runs on Dates whose UTC fields ARE the local wall-clock fields
// (no zone at all), and each local occurrence is then turned into an instant with Intl (zoneInstant).
import rrule from 'rrule';
import { badRequest } from '../../shared/errors.js';

const { RRule } = rrule;
type RRuleInstance = InstanceType<typeof RRule>;

const DAY_MS = 86_400_000;

/** A local wall-clock date-time, `YYYY-MM-DDTHH:MM:SS` (no offset): an occurrence's key in its zone. */
export type LocalDateTime = string;

/** A window as offsets from each occurrence: ISO 8601 durations added to the occurrence's local time. */
export interface OffsetWindow {
  startOffset: string;
  endOffset: string;
}

export interface WindowOffsets {
  pickupWindow?: OffsetWindow;
  dropoffWindow?: OffsetWindow;
}

export interface Window {
  start: Date;
  end: Date;
}

export interface Occurrence {
  /** The occurrence's local date-time in the rule's zone (the unique key with the template). */
  local: LocalDateTime;
  /** The same moment as an instant. */
  at: Date;
  pickupWindow?: Window;
  dropoffWindow?: Window;
}

/** A rule read and checked: the normalised text (DTSTART and RRULE lines) and rrule's object on floating dates. */
export interface RecurringRule {
  text: string;
  timeZone: string;
  rrule: RRuleInstance;
}

// ---- time zones ----

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether Intl knows this IANA zone. */
export function isTimeZone(timeZone: string): boolean {
  if (typeof timeZone !== 'string' || timeZone.length === 0 || timeZone.length > 64) return false;
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** 400 naming `timeZone` when the zone is unknown. */
export function checkTimeZone(timeZone: string, field = 'body.timeZone'): void {
  if (!isTimeZone(timeZone))
    throw badRequest(`${field} must be an IANA time zone such as Africa/Nairobi (got "${timeZone}")`);
}

/** The wall-clock fields of an instant in a zone, as a "floating" epoch (UTC fields = local fields). */
function floatingOf(instantMs: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(instantMs))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
}

/** The zone's offset from UTC at an instant, in ms (local = instant + offset). */
function offsetAt(instantMs: number, timeZone: string): number {
  const whole = Math.floor(instantMs / 1000) * 1000;
  return floatingOf(whole, timeZone) - whole;
}

/**
 * The instant of a local wall-clock time (a floating epoch) in a zone. An ambiguous time (the hour
 * repeated when clocks go back) is its first instant; a time that does not exist (the hour skipped
 * when clocks go forward) moves forward by the gap (01:30 → 02:30), as Temporal's "compatible".
 */
export function zoneInstant(floatingMs: number, timeZone: string): Date {
  const before = offsetAt(floatingMs - DAY_MS / 2, timeZone);
  const after = offsetAt(floatingMs + DAY_MS / 2, timeZone);
  const valid = [before, after].filter((o) => offsetAt(floatingMs - o, timeZone) === o);
  if (valid.length === 0) return new Date(floatingMs - before);
  return new Date(floatingMs - Math.max(...valid));
}

/** `YYYY-MM-DDTHH:MM:SS` of a floating epoch. */
export function localText(floatingMs: number): LocalDateTime {
  return new Date(floatingMs).toISOString().slice(0, 19);
}

/** The local date-time of an instant in a zone, `YYYY-MM-DDTHH:MM:SS`. */
export function localOf(instant: Date, timeZone: string): LocalDateTime {
  return localText(floatingOf(instant.getTime(), timeZone));
}

// ---- offsets ----

const DURATION = /^(-)?P(?:(\d{1,3})D)?(?:T(?:(\d{1,4})H)?(?:(\d{1,6})M)?(?:(\d{1,7})S)?)?$/;

/**
 * An offset (`PT0S`, `PT1H30M`, `P1DT-…` is not allowed; a leading `-` negates the whole: `-PT30M`)
 * in ms of wall-clock time; undefined when not a duration.
 */
export function offsetMs(text: string): number | undefined {
  const m = DURATION.exec(text);
  if (!m || text.endsWith('T') || text === 'P' || text === '-P') return undefined;
  const [, minus, d, h, min, s] = m;
  const ms = ((Number(d ?? 0) * 24 + Number(h ?? 0)) * 60 + Number(min ?? 0)) * 60_000 + Number(s ?? 0) * 1000;
  return minus ? -ms : ms;
}

/** Max of an offset: a window ends at most 7 days after its occurrence. */
const MAX_OFFSET_MS = 7 * DAY_MS;

/** 400s naming the field when an offset is not a duration, out of range, or a window ends before it starts. */
export function checkOffsets(offsets: WindowOffsets, field = 'body.template'): void {
  for (const name of ['pickupWindow', 'dropoffWindow'] as const) {
    const w = offsets[name];
    if (!w) continue;
    const values: number[] = [];
    for (const key of ['startOffset', 'endOffset'] as const) {
      const ms = offsetMs(w[key]);
      if (ms === undefined || Math.abs(ms) > MAX_OFFSET_MS)
        throw badRequest(
          `${field}.${name}.${key} must be an ISO 8601 duration from the occurrence, within 7 days, such as PT0S, PT1H or P1DT-… written -PT30M (got "${w[key]}")`,
        );
      values.push(ms);
    }
    if (values[1] <= values[0]) throw badRequest(`${field}.${name}.endOffset must be after its startOffset`);
  }
  const p = offsets.pickupWindow;
  const d = offsets.dropoffWindow;
  if (p && d && offsetMs(d.endOffset)! < offsetMs(p.endOffset)!)
    throw badRequest(`${field}.dropoffWindow.endOffset must not be before pickupWindow.endOffset`);
}

/** The windows of an occurrence: the offsets added to its local wall-clock time, then made instants in the zone. */
export function windowsFor(local: LocalDateTime, timeZone: string, offsets: WindowOffsets) {
  const floating = Date.parse(`${local}Z`);
  const out: { pickupWindow?: Window; dropoffWindow?: Window } = {};
  for (const name of ['pickupWindow', 'dropoffWindow'] as const) {
    const w = offsets[name];
    if (!w) continue;
    out[name] = {
      start: zoneInstant(floating + offsetMs(w.startOffset)!, timeZone),
      end: zoneInstant(floating + offsetMs(w.endOffset)!, timeZone),
    };
  }
  return out;
}

// ---- the rule ----

const DAYS = '(?:MO|TU|WE|TH|FR|SA|SU)';
const list = (item: string) => new RegExp(`^${item}(?:,${item})*$`);
const num =
  (lo: number, hi: number, signed = false) =>
  (v: string) =>
    v.split(',').every((x) => {
      if (!/^[+-]?\d{1,3}$/.test(x) || (!signed && /^[+-]/.test(x))) return false;
      const n = Math.abs(Number(x));
      return n >= lo && n <= hi && (!signed || Number(x) !== 0);
    });

const PARTS: Record<string, (v: string) => boolean> = {
  // Not SECONDLY or MINUTELY: rrule steps through every second or minute between matches (a
  // MINUTELY rule filtered to January, saved in July, took minutes of CPU); HOURLY with BYMINUTE
  // gives any time of day, and RECURRING_MAX_PER_DAY caps a day at 50 anyway.
  FREQ: (v) => /^(HOURLY|DAILY|WEEKLY|MONTHLY|YEARLY)$/.test(v),
  INTERVAL: (v) => /^\d{1,4}$/.test(v) && Number(v) >= 1,
  COUNT: (v) => /^\d{1,6}$/.test(v) && Number(v) >= 1,
  UNTIL: (v) =>
    /^\d{8}(T\d{6}Z?)?$/.test(v) && !Number.isNaN(Date.parse(`${v.slice(0, 4)}-${v.slice(4, 6)}-${v.slice(6, 8)}`)),
  BYSECOND: num(0, 59),
  BYMINUTE: num(0, 59),
  BYHOUR: num(0, 23),
  BYDAY: (v) => list(`(?:[+-]?(?:[1-9]|[1-4]\\d|5[0-3]))?${DAYS}`).test(v),
  BYMONTHDAY: num(1, 31, true),
  BYYEARDAY: num(1, 366, true),
  BYWEEKNO: num(1, 53, true),
  BYMONTH: num(1, 12),
  BYSETPOS: num(1, 366, true),
  WKST: (v) => new RegExp(`^${DAYS}$`).test(v),
};

const invalidRule = (why: string) =>
  badRequest(
    `body.rule must be an RFC 5545 recurrence rule such as "FREQ=DAILY;BYHOUR=18;BYMINUTE=0" or "DTSTART:20270101T180000\\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE" (${why})`,
  );

/**
 * Reads a rule: `RRULE:` (or its bare value) and an optional `DTSTART:YYYYMMDDTHHMMSS` line, a LOCAL time
 * in the rule's zone (no `Z`, no `TZID`). Without DTSTART the rule starts at `defaultStart` (a local
 * date-time): then a daily rule's time of day is given by BYHOUR/BYMINUTE. UNTIL is read as local time.
 */
export function parseRule(
  text: string,
  timeZone: string,
  defaultStart: LocalDateTime,
  /** False for a rule read back from storage (checked when it was saved). */
  checkNever = true,
): RecurringRule {
  if (typeof text !== 'string' || text.length > 1000) throw invalidRule('at most 1000 characters');
  const lines = text
    .split(/\r?\n|\\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  let dtstart: string | undefined;
  let value: string | undefined;
  for (const line of lines) {
    const upper = line.toUpperCase();
    if (upper.startsWith('DTSTART')) {
      const m = /^DTSTART:(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})$/.exec(upper);
      if (!m || dtstart)
        throw invalidRule('DTSTART is one local time in timeZone, written DTSTART:20270101T180000, without Z or TZID');
      dtstart = `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}`;
      if (Number.isNaN(Date.parse(`${dtstart}Z`)) || localText(Date.parse(`${dtstart}Z`)) !== dtstart)
        throw invalidRule('DTSTART is not a date');
    } else {
      if (value !== undefined) throw invalidRule('one RRULE only');
      value = upper.startsWith('RRULE:') ? upper.slice(6) : upper;
    }
  }
  if (!value) throw invalidRule('no RRULE');
  const seen = new Set<string>();
  for (const part of value.split(';')) {
    const eq = part.indexOf('=');
    const key = part.slice(0, eq);
    const v = part.slice(eq + 1);
    const check = PARTS[key];
    if (eq < 1 || !check) throw invalidRule(`unknown part "${part}"`);
    if (seen.has(key)) throw invalidRule(`${key} given twice`);
    seen.add(key);
    if (!check(v)) throw invalidRule(`bad ${key} "${v}"`);
  }
  if (!seen.has('FREQ')) throw invalidRule('FREQ is required');
  if (seen.has('COUNT') && seen.has('UNTIL')) throw invalidRule('COUNT and UNTIL may not both be given');
  // UNTIL is local, like every other date here: written floating (no Z) for rrule.
  const floatingValue = value.replace(
    /UNTIL=(\d{8})(?:T(\d{6})Z?)?/,
    (_, d: string, t?: string) => `UNTIL=${d}T${t ?? '235959'}Z`,
  );
  const start = dtstart ?? defaultStart;
  const options = RRule.parseString(floatingValue);
  const rule = new RRule({ ...options, dtstart: new Date(`${start}Z`), tzid: null });
  // rrule looks for a match until the year 9999 when there is none (FREQ=HOURLY;BYMONTH=6;BYMONTHDAY=31
  // took 85 s of CPU): the same rule is first tried from 9968, the same day and time, without COUNT
  // or UNTIL; 31 years hold every calendar (leap years and weekdays repeat every 28 outside centuries).
  const probeStart = new Date(`9968${start.slice(4)}Z`);
  const probe = checkNever && new RRule({ ...options, dtstart: probeStart, tzid: null, count: null, until: null });
  if (probe && !probe.after(probeStart, true)) throw invalidRule('it never occurs');
  return { text: `DTSTART:${start.replace(/[-:]/g, '')}\nRRULE:${value}`, timeZone, rrule: rule };
}

/**
 * 400 when the rule would give more than `maxPerDay` occurrences on some local day (looked at over its
 * first 400 days and, for rules that start later, from `fromLocal` on).
 */
export function checkPerDay(rule: RecurringRule, maxPerDay: number, fromLocal: LocalDateTime): void {
  const starts = [rule.rrule.options.dtstart.getTime(), Date.parse(`${fromLocal}Z`)];
  for (const start of starts) {
    const perDay = new Map<string, number>();
    let over: string | undefined;
    rule.rrule.between(new Date(start), new Date(start + 400 * DAY_MS), true, (d) => {
      const day = localText(d.getTime()).slice(0, 10);
      const n = (perDay.get(day) ?? 0) + 1;
      perDay.set(day, n);
      if (n > maxPerDay) over = day;
      return over === undefined;
    });
    if (over)
      throw badRequest(
        `body.rule gives more than RECURRING_MAX_PER_DAY (${maxPerDay}) occurrences on ${over}`,
        'RECURRING_TOO_FREQUENT',
      );
  }
}

/**
 * The occurrences whose instant is in [from, until), at most `limit`, each with its windows. Local
 * times that do not exist (skipped by a daylight-saving change) move forward by the gap.
 */
export function occurrences(
  rule: RecurringRule,
  offsets: WindowOffsets,
  range: { from: Date; until: Date; limit?: number },
): Occurrence[] {
  const { timeZone } = rule;
  // In floating time, widened by a day each side: the zone's offset is less than that.
  const fromF = range.from.getTime() + offsetAt(range.from.getTime(), timeZone) - DAY_MS;
  const untilF = range.until.getTime() + offsetAt(range.until.getTime(), timeZone) + DAY_MS;
  const limit = range.limit ?? Infinity;
  const out: Occurrence[] = [];
  rule.rrule.between(new Date(fromF), new Date(untilF), true, (d) => {
    const at = zoneInstant(d.getTime(), timeZone);
    if (at >= range.from && at < range.until) {
      const local = localText(d.getTime());
      out.push({ local, at, ...windowsFor(local, timeZone, offsets) });
    }
    return out.length < limit;
  });
  return out;
}
