// "As soon as possible" or "Schedule" (contract section 22): the slot pickers of the new-delivery form
// (a pickup window and an optional drop-off window) and of the ride booking (a pickup time), days and
// slots in the job's time zone; the quote's pickupEta / dropoffEta / availability in words; and an API
// error with its code. Every value shown is text (React escapes it), never HTML.
import { ApiError, errorText } from './api/errors';
import { SelectField } from './ui';
import { MINUTE_MS, nextDays, slotsOf, whenText, type Slot } from './zoned-time';

/** How far ahead the pickers offer days (the API takes up to SCHEDULE_MAX_AHEAD, 30 days by default). */
const DAYS_AHEAD = 14;
/** Delivery windows: one hour, starting on the hour from 07:00 to 21:00 local. */
const WINDOW = { stepMinutes: 60, lengthMinutes: 60, firstHour: 7, lastHour: 21 };
/** Rides: a time every 15 minutes, at least RIDE_SCHEDULE_MIN_AHEAD (30 minutes by default) ahead. */
const RIDE_STEP_MINUTES = 15;
const RIDE_MIN_AHEAD_MS = 31 * MINUTE_MS;

export interface DeliveryWhen {
  scheduled: boolean;
  pickupDay: string;
  pickupSlot: string;
  dropoffDay: string;
  /** '' = no drop-off window. */
  dropoffSlot: string;
}

export const ASAP_DELIVERY: DeliveryWhen = {
  scheduled: false,
  pickupDay: '',
  pickupSlot: '',
  dropoffDay: '',
  dropoffSlot: '',
};

type Window = { start: string; end: string };
const iso = (s: Slot): Window => ({ start: new Date(s.start).toISOString(), end: new Date(s.end).toISOString() });

function windowSlots(day: string, timeZone: string, earliestMs: number) {
  return day ? slotsOf(day, timeZone, { ...WINDOW, earliestMs }) : [];
}

/** The windows of the choice, as the API takes them (nothing for ASAP or an incomplete choice). */
export function deliveryWindows(
  when: DeliveryWhen,
  timeZone: string,
): { pickupWindow?: Window; dropoffWindow?: Window } {
  if (!when.scheduled) return {};
  const pickup = windowSlots(when.pickupDay, timeZone, 0).find((s) => s.value === when.pickupSlot);
  const dropoff = windowSlots(when.dropoffDay, timeZone, 0).find((s) => s.value === when.dropoffSlot);
  return { ...(pickup ? { pickupWindow: iso(pickup) } : {}), ...(dropoff ? { dropoffWindow: iso(dropoff) } : {}) };
}

function ZoneHint({ timeZone }: { timeZone: string }) {
  return <p className="hint">Days and times are in {timeZone} time.</p>;
}

/** Pickup window (day + one-hour slot) and an optional drop-off window, or as soon as possible. */
export function DeliveryWhenPicker({
  value,
  onChange,
  timeZone,
  nowMs,
}: {
  value: DeliveryWhen;
  onChange: (v: DeliveryWhen) => void;
  timeZone: string;
  nowMs: number;
}) {
  const days = nextDays(nowMs, timeZone, DAYS_AHEAD);
  const pickupSlots = windowSlots(value.pickupDay, timeZone, nowMs);
  const pickup = pickupSlots.find((s) => s.value === value.pickupSlot);
  // A drop-off window may not end before the pickup window does.
  const dropoffDays = days.filter((d) => !value.pickupDay || d.value >= value.pickupDay);
  const dropoffSlots = windowSlots(value.dropoffDay, timeZone, nowMs).filter((s) => !pickup || s.end >= pickup.end);
  const schedule = () => {
    const day = days.find((d) => windowSlots(d.value, timeZone, nowMs).length > 0)?.value ?? days[0]!.value;
    const first = windowSlots(day, timeZone, nowMs)[0];
    onChange({ scheduled: true, pickupDay: day, pickupSlot: first?.value ?? '', dropoffDay: day, dropoffSlot: '' });
  };
  return (
    <fieldset>
      <legend>When</legend>
      <label className="inline">
        <input type="radio" name="delivery-when" checked={!value.scheduled} onChange={() => onChange(ASAP_DELIVERY)} />{' '}
        As soon as possible
      </label>
      <label className="inline">
        <input type="radio" name="delivery-when" checked={value.scheduled} onChange={schedule} /> Schedule a pickup
        window
      </label>
      {value.scheduled && (
        <>
          <div className="row">
            <SelectField
              label="Pickup day"
              value={value.pickupDay}
              onChange={(e) => {
                const day = e.target.value;
                const first = windowSlots(day, timeZone, nowMs)[0];
                onChange({
                  ...value,
                  pickupDay: day,
                  pickupSlot: first?.value ?? '',
                  dropoffDay: value.dropoffDay < day ? day : value.dropoffDay,
                  dropoffSlot: '',
                });
              }}
            >
              {days.map((d) => (
                <option key={d.value} value={d.value}>
                  {d.label}
                </option>
              ))}
            </SelectField>
            <SelectField
              label="Pickup window"
              value={value.pickupSlot}
              onChange={(e) => onChange({ ...value, pickupSlot: e.target.value, dropoffSlot: '' })}
            >
              {pickupSlots.length === 0 && <option value="">No slot left that day</option>}
              {pickupSlots.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </SelectField>
          </div>
          <div className="row">
            <SelectField
              label="Drop-off day"
              value={value.dropoffDay}
              onChange={(e) => onChange({ ...value, dropoffDay: e.target.value, dropoffSlot: '' })}
            >
              {dropoffDays.map((d) => (
                <option key={d.value} value={d.value}>
                  {d.label}
                </option>
              ))}
            </SelectField>
            <SelectField
              label="Drop-off window"
              value={value.dropoffSlot}
              onChange={(e) => onChange({ ...value, dropoffSlot: e.target.value })}
            >
              <option value="">Any time after the pickup</option>
              {dropoffSlots.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </SelectField>
          </div>
          <ZoneHint timeZone={timeZone} />
        </>
      )}
    </fieldset>
  );
}

export interface RideWhen {
  scheduled: boolean;
  day: string;
  time: string;
}

export const RIDE_NOW: RideWhen = { scheduled: false, day: '', time: '' };

function rideSlots(day: string, timeZone: string, nowMs: number) {
  return day
    ? slotsOf(day, timeZone, {
        stepMinutes: RIDE_STEP_MINUTES,
        lengthMinutes: 0,
        firstHour: 0,
        lastHour: 23.75,
        earliestMs: nowMs + RIDE_MIN_AHEAD_MS,
      })
    : [];
}

/** The ride's scheduledAt (RFC 3339), or undefined for a ride now (or an incomplete choice). */
export function rideScheduledAt(when: RideWhen, timeZone: string): string | undefined {
  if (!when.scheduled || !when.day || !when.time) return undefined;
  const slot = slotsOf(when.day, timeZone, {
    stepMinutes: RIDE_STEP_MINUTES,
    lengthMinutes: 0,
    firstHour: 0,
    lastHour: 23.75,
    earliestMs: 0,
  }).find((s) => s.value === when.time);
  return slot ? new Date(slot.start).toISOString() : undefined;
}

/** "Now" or "Later": a day and a pickup time (every 15 minutes, at least 30 minutes ahead). */
export function RideWhenPicker({
  value,
  onChange,
  timeZone,
  nowMs,
}: {
  value: RideWhen;
  onChange: (v: RideWhen) => void;
  timeZone: string;
  nowMs: number;
}) {
  const days = nextDays(nowMs, timeZone, DAYS_AHEAD).filter((d) => rideSlots(d.value, timeZone, nowMs).length > 0);
  const times = rideSlots(value.day, timeZone, nowMs);
  const later = () => {
    const day = days[0]!.value;
    onChange({ scheduled: true, day, time: rideSlots(day, timeZone, nowMs)[0]!.value });
  };
  return (
    <fieldset className="when">
      <legend>When</legend>
      <label className="inline">
        <input type="radio" name="ride-when" checked={!value.scheduled} onChange={() => onChange(RIDE_NOW)} /> Now
      </label>
      <label className="inline">
        <input type="radio" name="ride-when" checked={value.scheduled} onChange={later} /> Later
      </label>
      {value.scheduled && (
        <>
          <SelectField
            label="Day"
            value={value.day}
            onChange={(e) =>
              onChange({
                ...value,
                day: e.target.value,
                time: rideSlots(e.target.value, timeZone, nowMs)[0]?.value ?? '',
              })
            }
          >
            {days.map((d) => (
              <option key={d.value} value={d.value}>
                {d.label}
              </option>
            ))}
          </SelectField>
          <SelectField
            label="Pickup time"
            value={value.time}
            onChange={(e) => onChange({ ...value, time: e.target.value })}
          >
            {times.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </SelectField>
          <ZoneHint timeZone={timeZone} />
        </>
      )}
    </fieldset>
  );
}

const AVAILABILITY_TEXT = {
  WARN: 'Few drivers: at this hour last week there were fewer drivers than jobs around here, so the pickup may be late.',
  BLOCK:
    'Probably not served: no driver of this vehicle type was active around here in the last 7 days, or the drop-off window cannot be reached in time. You can still book it.',
} as const;

/** The quote's timing: the expected pickup and drop-off in the zone, and its availability unless OK (paragraphs). */
export function QuoteTiming({
  quote,
  timeZone,
  nowMs,
}: {
  quote: { pickupEta?: string | null; dropoffEta?: string | null; availability?: 'OK' | 'WARN' | 'BLOCK' };
  timeZone: string;
  nowMs: number;
}) {
  const at = (iso: string) => whenText(Date.parse(iso), timeZone, nowMs);
  return (
    <>
      {quote.pickupEta && (
        <p className="quote-timing" data-testid="quote-eta">
          Pickup expected {at(quote.pickupEta)}
          {quote.dropoffEta ? `, drop-off about ${at(quote.dropoffEta)}` : ''} ({timeZone}).
        </p>
      )}
      {quote.availability && quote.availability !== 'OK' && (
        <p className={quote.availability === 'BLOCK' ? 'error' : 'notice'} data-testid="availability">
          {AVAILABILITY_TEXT[quote.availability]} <code className="error-code">{quote.availability}</code>
        </p>
      )}
    </>
  );
}

/** An error as the API said it, with its code (VALIDATION_FAILED, QUOTE_EXPIRED, …) shown. */
export function ApiErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {errorText(error)}
      {error instanceof ApiError && error.code ? (
        <>
          {' '}
          <code className="error-code">{error.code}</code>
        </>
      ) : null}
    </p>
  );
}
