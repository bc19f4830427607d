// Recurring jobs (contract section 22): the business's list, a new one (daily or weekly at a time, or
// a raw RRULE; a package template whose windows are offsets from each occurrence), and one job's next
// occurrences with pause, resume, skip and delete.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../shared/api/client';
import type { Schemas } from '../../shared/api/types';
import { CountryField, useCountries } from '../../shared/countries';
import {
  BusyButton,
  ErrorBox,
  Field,
  Notice,
  PageTitle,
  SelectField,
  StatusBadge,
  VEHICLE_TYPES,
  formatTime,
} from '../../shared/ui';
import { Link, navigate } from '../router';

type CreateBody = Schemas['/api/recurring-jobs']['post']['requestBody']['content']['application/json'];
type Job = Schemas['/api/recurring-jobs/{id}']['get']['responses'][200]['content']['application/json'];
type Occurrence = NonNullable<Job['nextOccurrences']>[number];

const keys = {
  list: ['recurring-jobs'] as const,
  one: (id: string) => ['recurring-jobs', id] as const,
};

const DAYS = [
  ['MO', 'Monday'],
  ['TU', 'Tuesday'],
  ['WE', 'Wednesday'],
  ['TH', 'Thursday'],
  ['FR', 'Friday'],
  ['SA', 'Saturday'],
  ['SU', 'Sunday'],
] as const;

const ZONES = ['Africa/Nairobi', 'Europe/London', 'America/New_York', 'UTC'];

/** The RRULE of the picker's choice. */
export function ruleOf(kind: 'DAILY' | 'WEEKLY' | 'RAW', time: string, days: string[], raw: string): string {
  if (kind === 'RAW') return raw.trim();
  const [h, m] = time.split(':').map(Number);
  const at = `BYHOUR=${h};BYMINUTE=${m};BYSECOND=0`;
  return kind === 'DAILY' ? `FREQ=DAILY;${at}` : `FREQ=WEEKLY;BYDAY=${days.join(',')};${at}`;
}

/** Minutes as an ISO 8601 duration (PT90M). */
const minutes = (n: number) => `PT${Math.round(n)}M`;

/** A rule as people read it: "Daily at 18:00", "Weekly on MO,WE at 09:30", else the rule itself. */
export function describeRule(rule: string): string {
  const line =
    rule
      .split('\n')
      .find((l) => l.startsWith('RRULE:'))
      ?.slice(6) ?? rule;
  const parts = Object.fromEntries(line.split(';').map((p) => p.split('=') as [string, string]));
  const keysOf = Object.keys(parts).sort().join(',');
  const time =
    parts.BYHOUR !== undefined && /^\d+$/.test(parts.BYHOUR) && /^\d+$/.test(parts.BYMINUTE ?? '0')
      ? `${parts.BYHOUR.padStart(2, '0')}:${(parts.BYMINUTE ?? '0').padStart(2, '0')}`
      : undefined;
  if (time && parts.FREQ === 'DAILY' && /^BYHOUR,(BYMINUTE,)?(BYSECOND,)?FREQ$/.test(keysOf)) return `Daily at ${time}`;
  if (time && parts.FREQ === 'WEEKLY' && /^BYDAY,BYHOUR,(BYMINUTE,)?(BYSECOND,)?FREQ$/.test(keysOf))
    return `Weekly on ${parts.BYDAY} at ${time}`;
  return line;
}

interface StopInput {
  lat: string;
  lng: string;
  address: string;
  contactName: string;
  contactPhone: string;
}
const emptyStop: StopInput = { lat: '', lng: '', address: '', contactName: '', contactPhone: '' };

function StopInputs({ legend, stop, onChange }: { legend: string; stop: StopInput; onChange: (s: StopInput) => void }) {
  const set = (key: keyof StopInput) => (e: { target: { value: string } }) =>
    onChange({ ...stop, [key]: e.target.value });
  return (
    <fieldset>
      <legend>{legend}</legend>
      <div className="row">
        <Field
          label={`${legend} latitude`}
          type="number"
          step="any"
          min={-90}
          max={90}
          required
          value={stop.lat}
          onChange={set('lat')}
        />
        <Field
          label={`${legend} longitude`}
          type="number"
          step="any"
          min={-180}
          max={180}
          required
          value={stop.lng}
          onChange={set('lng')}
        />
      </div>
      <Field label={`${legend} address`} required maxLength={500} value={stop.address} onChange={set('address')} />
      <div className="row">
        <Field
          label={`${legend} contact name`}
          required
          maxLength={200}
          value={stop.contactName}
          onChange={set('contactName')}
        />
        <Field
          label={`${legend} contact phone`}
          type="tel"
          required
          pattern="\+[1-9][0-9]{6,14}"
          placeholder="+254712345678"
          value={stop.contactPhone}
          onChange={set('contactPhone')}
        />
      </div>
    </fieldset>
  );
}

const stopBody = (s: StopInput) => ({
  location: { lat: Number(s.lat), lng: Number(s.lng) },
  address: s.address,
  contactName: s.contactName,
  contactPhone: s.contactPhone,
});

function NewRecurringForm() {
  const client = useQueryClient();
  const countries = useCountries();
  const [kind, setKind] = useState<'DAILY' | 'WEEKLY' | 'RAW'>('DAILY');
  const [time, setTime] = useState('18:00');
  const [days, setDays] = useState<string[]>(['MO', 'WE', 'FR']);
  const [raw, setRaw] = useState('FREQ=DAILY;BYHOUR=18;BYMINUTE=0');
  const [timeZone, setTimeZone] = useState('');
  const [pickupMinutes, setPickupMinutes] = useState('60');
  const [dropoffAfter, setDropoffAfter] = useState('');
  const [dropoffMinutes, setDropoffMinutes] = useState('60');
  const [countryId, setCountryId] = useState('');
  const [vehicleType, setVehicleType] = useState<(typeof VEHICLE_TYPES)[number]>('BIKE');
  const [pickup, setPickup] = useState<StopInput>(emptyStop);
  const [dropoff, setDropoff] = useState<StopInput>(emptyStop);
  const [description, setDescription] = useState('');

  const create = useMutation({
    mutationFn: () => {
      const body: CreateBody = {
        rule: ruleOf(kind, time, days, raw),
        ...(timeZone ? { timeZone } : {}),
        template: {
          pickup: stopBody(pickup),
          dropoff: stopBody(dropoff),
          vehicleType,
          countryId: countryId || countries.data?.items[0]?.id || '',
          parcel: { description },
          pickupWindow: { startOffset: 'PT0S', endOffset: minutes(Number(pickupMinutes)) },
          ...(dropoffAfter
            ? {
                dropoffWindow: {
                  startOffset: minutes(Number(dropoffAfter) * 60),
                  endOffset: minutes(Number(dropoffAfter) * 60 + Number(dropoffMinutes)),
                },
              }
            : {}),
        },
      };
      return ok(api.POST('/api/recurring-jobs', { body }));
    },
    onSuccess: (job) => {
      void client.invalidateQueries({ queryKey: keys.list });
      navigate(`/recurring/${job.id}`);
    },
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };

  return (
    <form onSubmit={submit} aria-labelledby="new-heading">
      <h2 id="new-heading">New recurring job</h2>
      <fieldset>
        <legend>Repeats</legend>
        {(
          [
            ['DAILY', 'Every day'],
            ['WEEKLY', 'On some days of the week'],
            ['RAW', 'Another rule (RRULE)'],
          ] as const
        ).map(([value, label]) => (
          <label key={value} className="inline">
            <input type="radio" name="repeat" checked={kind === value} onChange={() => setKind(value)} /> {label}
          </label>
        ))}
      </fieldset>
      {kind === 'WEEKLY' && (
        <fieldset>
          <legend>Days</legend>
          {DAYS.map(([code, name]) => (
            <label key={code} className="inline">
              <input
                type="checkbox"
                checked={days.includes(code)}
                onChange={(e) =>
                  setDays(
                    e.target.checked
                      ? DAYS.map(([c]) => c).filter((c) => c === code || days.includes(c))
                      : days.filter((d) => d !== code),
                  )
                }
              />{' '}
              {name}
            </label>
          ))}
        </fieldset>
      )}
      {kind === 'RAW' ? (
        <Field
          label="Rule"
          required
          maxLength={1000}
          value={raw}
          hint="RFC 5545, e.g. FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=9 (times are local to the time zone)"
          onChange={(e) => setRaw(e.target.value)}
        />
      ) : (
        <Field label="Pickup time" type="time" required value={time} onChange={(e) => setTime(e.target.value)} />
      )}
      <SelectField label="Time zone" value={timeZone} onChange={(e) => setTimeZone(e.target.value)}>
        <option value="">The business’s country’s</option>
        {ZONES.map((z) => (
          <option key={z} value={z}>
            {z}
          </option>
        ))}
      </SelectField>
      <div className="row">
        <Field
          label="Pickup window (minutes from the pickup time)"
          type="number"
          min={1}
          max={1440}
          required
          value={pickupMinutes}
          onChange={(e) => setPickupMinutes(e.target.value)}
        />
        <Field
          label="Drop-off window starts (hours after the pickup time)"
          type="number"
          min={0}
          max={48}
          step="0.5"
          hint="Empty: no drop-off window. 13 with an 18:00 pickup is 07:00 the next day."
          value={dropoffAfter}
          onChange={(e) => setDropoffAfter(e.target.value)}
        />
        <Field
          label="Drop-off window (minutes)"
          type="number"
          min={1}
          max={1440}
          value={dropoffMinutes}
          onChange={(e) => setDropoffMinutes(e.target.value)}
        />
      </div>
      <CountryField countries={countries.data?.items} value={countryId} onChange={setCountryId} />
      <SelectField
        label="Vehicle type"
        value={vehicleType}
        onChange={(e) => setVehicleType(e.target.value as (typeof VEHICLE_TYPES)[number])}
      >
        {VEHICLE_TYPES.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </SelectField>
      <StopInputs legend="Pickup" stop={pickup} onChange={setPickup} />
      <StopInputs legend="Drop-off" stop={dropoff} onChange={setDropoff} />
      <Field
        label="Parcel description"
        required
        maxLength={1000}
        value={description}
        onChange={(e) => setDescription(e.target.value)}
      />
      <ErrorBox error={create.error} />
      <BusyButton type="submit" busy={create.isPending} disabled={kind === 'WEEKLY' && days.length === 0}>
        Create recurring job
      </BusyButton>
    </form>
  );
}

export function RecurringJobsPage() {
  const list = useQuery({ queryKey: keys.list, queryFn: () => ok(api.GET('/api/recurring-jobs')) });
  const items = list.data?.items;
  return (
    <>
      <PageTitle>Recurring jobs</PageTitle>
      <section aria-labelledby="list-heading">
        <h2 id="list-heading">Your recurring jobs</h2>
        <ErrorBox error={list.error} />
        {items?.length === 0 && <p>No recurring jobs yet.</p>}
        {items && items.length > 0 && (
          <table>
            <caption className="sr-only">Recurring jobs</caption>
            <thead>
              <tr>
                <th scope="col">Repeats</th>
                <th scope="col">Time zone</th>
                <th scope="col">Pickup</th>
                <th scope="col">State</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {items.map((job) => (
                <tr key={job.id}>
                  <td>
                    <Link to={`/recurring/${job.id}`}>{describeRule(job.rule)}</Link>
                  </td>
                  <td>{job.timeZone}</td>
                  <td>{job.template.pickup.address}</td>
                  <td>
                    <StatusBadge status={job.state} />
                  </td>
                  <td>{formatTime(job.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <NewRecurringForm />
    </>
  );
}

/** A local date-time of the job's zone as written in it ("2027-01-04 18:00"). */
const local = (date: string) => date.slice(0, 16).replace('T', ' ');

/** An instant as the job's zone shows it. */
function inZone(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
  }).format(new Date(iso));
}

export function RecurringJobPage({ id }: { id: string }) {
  const client = useQueryClient();
  const params = { path: { id } };
  const job = useQuery({ queryKey: keys.one(id), queryFn: () => ok(api.GET('/api/recurring-jobs/{id}', { params })) });
  const [until, setUntil] = useState('');
  const [notice, setNotice] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const refresh = (message: string) => {
    setNotice(message);
    void client.invalidateQueries({ queryKey: keys.list });
    return client.invalidateQueries({ queryKey: keys.one(id) });
  };
  const pause = useMutation({
    mutationFn: () =>
      ok(
        api.POST('/api/recurring-jobs/{id}/pause', {
          params,
          body: until ? { until: new Date(until).toISOString() } : {},
        }),
      ),
    onSuccess: (paused) => refresh(`Paused: ${paused.cancelled} pending occurrence(s) cancelled.`),
  });
  const resume = useMutation({
    mutationFn: () => ok(api.POST('/api/recurring-jobs/{id}/resume', { params })),
    onSuccess: () => refresh('Resumed.'),
  });
  const skip = useMutation({
    mutationFn: (date: string) =>
      ok(api.DELETE('/api/recurring-jobs/{id}/occurrences/{date}', { params: { path: { id, date } } })),
    onSuccess: (result) => refresh(`Skipped ${result.skipped.map((o) => local(o.date)).join(', ')}.`),
  });
  const remove = useMutation({
    mutationFn: () => ok(api.DELETE('/api/recurring-jobs/{id}', { params })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: keys.list });
      navigate('/recurring');
    },
  });
  const data = job.data;
  return (
    <>
      <PageTitle>Recurring job</PageTitle>
      <p>
        <Link to="/recurring">All recurring jobs</Link>
      </p>
      <ErrorBox error={job.error} />
      {data && (
        <>
          <dl className="facts">
            <dt>Repeats</dt>
            <dd>{describeRule(data.rule)}</dd>
            <dt>Rule</dt>
            <dd>
              <code>{data.rule.replace('\n', ' ')}</code>
            </dd>
            <dt>Time zone</dt>
            <dd>{data.timeZone}</dd>
            <dt>State</dt>
            <dd>
              <StatusBadge status={data.state} />
              {data.state === 'PAUSED' &&
                (data.pausedUntil ? ` until ${formatTime(data.pausedUntil)}` : ' until resumed')}
            </dd>
            <dt>Pickup</dt>
            <dd>{data.template.pickup.address}</dd>
            <dt>Drop-off</dt>
            <dd>{data.template.dropoff.address}</dd>
          </dl>
          {notice && <Notice>{notice}</Notice>}
          <section aria-labelledby="next-heading">
            <h2 id="next-heading">Next occurrences</h2>
            <ErrorBox error={skip.error} />
            <table>
              <caption className="sr-only">The next 10 occurrences, in {data.timeZone} time</caption>
              <thead>
                <tr>
                  <th scope="col">When ({data.timeZone})</th>
                  <th scope="col">Pickup window</th>
                  <th scope="col">Drop-off window</th>
                  <th scope="col">State</th>
                  <th scope="col">Delivery</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {(data.nextOccurrences ?? []).map((o: Occurrence) => (
                  <tr key={o.date}>
                    <td>{local(o.date)}</td>
                    <td>
                      {o.pickupWindow
                        ? `${inZone(o.pickupWindow.start, data.timeZone)} – ${inZone(o.pickupWindow.end, data.timeZone)}`
                        : '—'}
                    </td>
                    <td>
                      {o.dropoffWindow
                        ? `${inZone(o.dropoffWindow.start, data.timeZone)} – ${inZone(o.dropoffWindow.end, data.timeZone)}`
                        : '—'}
                    </td>
                    <td>
                      <StatusBadge status={o.state} />
                      {o.error ? <div className="hint">{o.error}</div> : null}
                    </td>
                    <td>{o.packageId ? <Link to={`/deliveries/${o.packageId}`}>Open</Link> : '—'}</td>
                    <td>
                      {(o.state === 'UPCOMING' || o.state === 'CREATED') && (
                        <BusyButton
                          type="button"
                          className="secondary"
                          busy={skip.isPending}
                          aria-label={`Skip ${local(o.date)}`}
                          onClick={() => skip.mutate(o.date)}
                        >
                          Skip
                        </BusyButton>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <section aria-labelledby="pause-heading">
            <h2 id="pause-heading">{data.state === 'PAUSED' ? 'Resume' : 'Pause'}</h2>
            {data.state === 'PAUSED' ? (
              <>
                <ErrorBox error={resume.error} />
                <BusyButton type="button" busy={resume.isPending} onClick={() => resume.mutate()}>
                  Resume
                </BusyButton>
              </>
            ) : (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  pause.mutate();
                }}
              >
                <Field
                  label="Pause until (your time; empty: until resumed)"
                  type="datetime-local"
                  value={until}
                  onChange={(e) => setUntil(e.target.value)}
                />
                <ErrorBox error={pause.error} />
                <BusyButton type="submit" busy={pause.isPending}>
                  Pause
                </BusyButton>
              </form>
            )}
          </section>
          <section aria-labelledby="delete-heading">
            <h2 id="delete-heading">Delete</h2>
            <ErrorBox error={remove.error} />
            {confirmDelete ? (
              <>
                <p>Its pending deliveries still to come are cancelled.</p>
                <BusyButton type="button" busy={remove.isPending} onClick={() => remove.mutate()}>
                  Delete for good
                </BusyButton>{' '}
                <button type="button" className="secondary" onClick={() => setConfirmDelete(false)}>
                  Keep it
                </button>
              </>
            ) : (
              <button type="button" className="secondary" onClick={() => setConfirmDelete(true)}>
                Delete recurring job
              </button>
            )}
          </section>
        </>
      )}
    </>
  );
}
