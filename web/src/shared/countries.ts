// The countries (reference data, fetched once per tab): the registration form and the new-delivery form.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from './api/client';
import { queryKeys } from './query-keys';

export function useCountries() {
  return useQuery({ queryKey: queryKeys.countries, queryFn: () => ok(api.GET('/api/countries')), staleTime: Infinity });
}
