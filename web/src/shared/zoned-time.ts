// Local days and time slots in a job's time zone (contract section 22), computed with Intl so that the
// browser's own zone never matters: the pickers show a Nairobi job's slots in Nairobi time from
// anywhere, and turn the choice into a UTC instant (RFC 3339) for the API.

const MINUTE = 60_000;
const DAY = 86_400_000;

const partsFormat = new Map<string, Intl.DateTimeFormat>();

/** The wall clock of an instant in a zone: [year, month, day, hour, minute]. */
function wallOf(ms: number, timeZone: string): [number, number, number, number, number] {
  let format = partsFormat.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    });
    partsFormat.set(timeZone, format);
  }
  const get = (type: string) => Number(format!.formatToParts(new Date(ms)).find((p) => p.type === type)?.value);
  return [get('year'), get('month'), get('day'), get('hour'), get('minute')];
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The local date (YYYY-MM-DD) of an instant in a zone. */
export function localDate(ms: number, timeZone: string): string {
  const [y, m, d] = wallOf(ms, timeZone);
  return `${y}-${pad(m)}-${pad(d)}`;
}

/** The local time (HH:MM) of an instant in a zone. */
export function localTime(ms: number, timeZone: string): string {
  const [, , , h, min] = wallOf(ms, timeZone);
  return `${pad(h)}:${pad(min)}`;
}

/** The zone's offset from UTC at an instant (ms, east positive). */
function offsetAt(ms: number, timeZone: string): number {
  const [y, m, d, h, min] = wallOf(ms, timeZone);
  return Date.UTC(y, m - 1, d, h, min) - Math.floor(ms / MINUTE) * MINUTE;
}

/**
 * The instant of a local date and time in a zone. A time the clocks skip (spring forward) moves on by
 * the gap; a repeated one is its first instant.
 */
export function zonedInstant(date: string, time: string, timeZone: string): number {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const [h, min] = time.split(':').map(Number) as [number, number];
  const wall = Date.UTC(y, m - 1, d, h, min);
  // The zone's offsets half a day before and after: around a change they differ.
  const before = wall - offsetAt(wall - DAY / 2, timeZone);
  const after = wall - offsetAt(wall + DAY / 2, timeZone);
  const reads = (c: number) => localDate(c, timeZone) === date && localTime(c, timeZone) === time;
  const found = [before, after].filter(reads);
  // Repeated (clocks back): the first instant; skipped (clocks forward): the offset before, so later by the gap.
  return found.length ? Math.min(...found) : before;
}

export interface Day {
  /** YYYY-MM-DD, local. */
  value: string;
  label: string;
}

/** The next `count` local days from now in the zone: "Today, Mon 7 Dec", "Tomorrow, Tue 8 Dec", "Wed 9 Dec". */
export function nextDays(nowMs: number, timeZone: string, count: number): Day[] {
  const named = new Intl.DateTimeFormat('en-GB', { weekday: 'short', day: 'numeric', month: 'short', timeZone: 'UTC' });
  const today = localDate(nowMs, timeZone);
  const [y, m, d] = today.split('-').map(Number) as [number, number, number];
  return Array.from({ length: count }, (_, i) => {
    const noon = Date.UTC(y, m - 1, d + i, 12);
    const value = new Date(noon).toISOString().slice(0, 10);
    const words = named.format(noon).replace(',', '');
    return { value, label: i === 0 ? `Today, ${words}` : i === 1 ? `Tomorrow, ${words}` : words };
  });
}

export interface Slot {
  /** HH:MM, local: the slot's start. */
  value: string;
  label: string;
  start: number;
  end: number;
}

/**
 * A local day's slots of `lengthMinutes`, one every `stepMinutes` from `firstHour` to `lastHour` local,
 * those starting at `earliestMs` or later.
 */
export function slotsOf(
  date: string,
  timeZone: string,
  options: { stepMinutes: number; lengthMinutes: number; firstHour: number; lastHour: number; earliestMs: number },
): Slot[] {
  const out: Slot[] = [];
  for (let minute = options.firstHour * 60; minute <= options.lastHour * 60; minute += options.stepMinutes) {
    const value = `${pad(Math.floor(minute / 60))}:${pad(minute % 60)}`;
    const start = zonedInstant(date, value, timeZone);
    if (start < options.earliestMs || localDate(start, timeZone) !== date) continue;
    const end = start + options.lengthMinutes * MINUTE;
    const label =
      options.lengthMinutes > 0
        ? `${localTime(start, timeZone)}–${localTime(end, timeZone)}`
        : localTime(start, timeZone);
    if (out.some((s) => s.start === start)) continue;
    out.push({ value, label, start, end });
  }
  return out;
}

/** "15:00" (today), "Tue 8 Dec 15:00" otherwise, in the zone. */
export function whenText(ms: number, timeZone: string, nowMs: number): string {
  const time = localTime(ms, timeZone);
  if (localDate(ms, timeZone) === localDate(nowMs, timeZone)) return time;
  const day = new Intl.DateTimeFormat('en-GB', { weekday: 'short', day: 'numeric', month: 'short', timeZone }).format(
    ms,
  );
  return `${day.replace(',', '')} ${time}`;
}

export { DAY as DAY_MS, MINUTE as MINUTE_MS };
