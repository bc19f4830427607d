// The countries (reference data, fetched once per tab) and the country field of the registration
// forms and the new-delivery form.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from './api/client';
import { queryKeys } from './query-keys';
import { SelectField } from './ui';

export function useCountries() {
  return useQuery({ queryKey: queryKeys.countries, queryFn: () => ok(api.GET('/api/countries')), staleTime: Infinity });
}

/** "Country": a required choice among the countries loaded by `useCountries`. */
export function CountryField({
  countries,
  value,
  onChange,
}: {
  countries: { id: string; name: string }[] | undefined;
  value: string;
  onChange: (countryId: string) => void;
}) {
  return (
    <SelectField label="Country" required value={value} onChange={(e) => onChange(e.target.value)}>
      <option value="">Choose…</option>
      {countries?.map((c) => (
        <option key={c.id} value={c.id}>
          {c.name}
        </option>
      ))}
    </SelectField>
  );
}
