// A new recurring job: daily or weekly at a time, or a raw RRULE; a package template whose windows are offsets.
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../shared/api/client';
import { CountryField, useCountries } from '../../shared/countries';
import { StopFields, emptyStop, type Stop } from '../../shared/deliveries/stop-fields';
import { BusyButton, ErrorBox, Field, SelectField, VEHICLE_TYPES } from '../../shared/ui';
import { navigate } from '../router';
import { keys, ruleOf, type CreateBody } from './recurring-shared';

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

/** Minutes as an ISO 8601 duration (PT90M). */
const minutes = (n: number) => `PT${Math.round(n)}M`;

const stopBody = (s: Stop) => ({
  location: { lat: Number(s.lat), lng: Number(s.lng) },
  address: s.address,
  contactName: s.contactName,
  contactPhone: s.contactPhone,
});

export function NewRecurringForm() {
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
  const [pickup, setPickup] = useState<Stop>(emptyStop);
  const [dropoff, setDropoff] = useState<Stop>(emptyStop);
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
      <StopFields legend="Pickup" stop={pickup} onChange={setPickup} notes={false} />
      <StopFields legend="Drop-off" stop={dropoff} onChange={setDropoff} notes={false} />
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
