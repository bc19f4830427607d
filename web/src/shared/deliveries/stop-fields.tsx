// A stop's inputs (coordinates, address, contact, notes), shared by the new-delivery and new-recurring-job forms.
import { Field } from '../ui';

export interface Stop {
  lat: string;
  lng: string;
  address: string;
  contactName: string;
  contactPhone: string;
  notes: string;
}
export const emptyStop: Stop = { lat: '', lng: '', address: '', contactName: '', contactPhone: '', notes: '' };

/** `notes={false}` leaves out the notes field (a form whose stop has none). */
export function StopFields({
  legend,
  stop,
  onChange,
  notes = true,
}: {
  legend: string;
  stop: Stop;
  onChange: (s: Stop) => void;
  notes?: boolean;
}) {
  const set = (key: keyof Stop) => (e: { target: { value: string } }) => onChange({ ...stop, [key]: e.target.value });
  const coordinate = (key: 'lat' | 'lng', name: string, limit: number) => (
    <Field
      label={`${legend} ${name}`}
      type="number"
      step="any"
      min={-limit}
      max={limit}
      required
      value={stop[key]}
      onChange={set(key)}
    />
  );
  return (
    <fieldset>
      <legend>{legend}</legend>
      <div className="row">
        {coordinate('lat', 'latitude', 90)}
        {coordinate('lng', 'longitude', 180)}
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
      {notes && <Field label={`${legend} notes`} maxLength={1000} value={stop.notes} onChange={set('notes')} />}
    </fieldset>
  );
}
