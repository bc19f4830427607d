// Booking a ride: the pickup from the phone's position (or a tap on the map), the destination by a tap
// or by address search, one quote per vehicle type (asked again when it expires), then "Request ride"
// with the chosen quote.
import { useMutation, useQueries, useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { api, ok } from '../shared/api/client';
import { ApiError, errorText } from '../shared/api/errors';
import { Map, type MapPoint } from '../shared/map';
import { customerKeys } from '../shared/query-keys';
import { useCountries } from '../shared/countries';
import { BusyButton, ErrorBox, Field, VEHICLE_TYPES, formatMoney } from '../shared/ui';
import { ApiErrorBox, QuoteTiming, RIDE_NOW, RideWhenPicker, rideScheduledAt, type RideWhen } from '../shared/when';
import type { Point, Quote, Ride, VehicleType } from './types';
import { vehicleName } from './types';
import { minutes, Title } from './ui';

export interface Trip {
  pickup?: Point;
  destination?: Point;
}

const fmt = (p: Point) => `${p.lat.toFixed(5)}, ${p.lng.toFixed(5)}`;

/** A place the geocoder found: its name and position. */
interface Place {
  name: string;
  location: Point;
}

/** GET /geocode's places, those with a name. */
function toPlaces(found: { name: string; lat: number; lng: number }[]): Place[] {
  return found.filter((p) => p.name !== '').map((p) => ({ name: p.name, location: { lat: p.lat, lng: p.lng } }));
}

/**
 * "Destination": an address search through `GET /geocode` (the suggestions are buttons named by the
 * place). A service without a geocoder (404 GEOCODER_NOT_CONFIGURED, or no such route) hides it.
 */
function DestinationSearch({
  countryId,
  onChoose,
  onUnavailable,
}: {
  countryId: string;
  onChoose: (p: Place) => void;
  onUnavailable: () => void;
}) {
  const [q, setQ] = useState('');
  const [settled, setSettled] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setSettled(q.trim()), 400);
    return () => clearTimeout(timer);
  }, [q]);
  const search = useQuery({
    queryKey: customerKeys.geocode(countryId, settled),
    enabled: settled.length >= 3,
    retry: false,
    staleTime: 5 * 60_000,
    queryFn: async () => toPlaces(await ok(api.GET('/api/geocode', { params: { query: { q: settled, countryId } } }))),
  });
  const unavailable = search.error instanceof ApiError && search.error.status === 404;
  useEffect(() => {
    if (unavailable) onUnavailable();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once when the search becomes unavailable, not on every new callback
  }, [unavailable]);
  return (
    <div className="search">
      <Field
        label="Destination"
        type="search"
        autoComplete="off"
        maxLength={200}
        value={q}
        onChange={(e) => setQ(e.target.value)}
        hint="An address or a place, or tap on the map"
      />
      {search.isFetching && <p className="muted">Searching…</p>}
      {!unavailable && <ErrorBox error={search.error} />}
      {search.data && settled.length >= 3 && (
        <ul className="suggestions" aria-label="Places found">
          {search.data.length === 0 && <li className="muted">Nothing found.</li>}
          {search.data.map((p, i) => (
            <li key={i}>
              <button
                type="button"
                className="secondary"
                onClick={() => {
                  onChoose(p);
                  setQ(p.name);
                  setSettled('');
                }}
              >
                {p.name}
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** One quote per vehicle type for the trip, each asked again once it has expired. */
function useQuotes(
  pickup: Point | undefined,
  destination: Point | undefined,
  countryId: string,
  scheduledAt: string | undefined,
) {
  const trip = pickup && destination ? JSON.stringify([pickup, destination, countryId, scheduledAt ?? null]) : '';
  const quotes = useQueries({
    queries: VEHICLE_TYPES.map((vehicleType) => ({
      queryKey: customerKeys.rideQuote(trip, vehicleType),
      enabled: trip !== '',
      retry: false,
      staleTime: Infinity,
      gcTime: 0,
      refetchInterval: (query: { state: { data?: Quote } }) =>
        query.state.data ? Math.max(1000, Date.parse(query.state.data.expiresAt) - Date.now()) : false,
      queryFn: () =>
        ok(
          api.POST('/api/quotes', {
            body: {
              kind: 'RIDE',
              pickup: { location: pickup! },
              dropoff: { location: destination! },
              vehicleType,
              countryId,
              ...(scheduledAt ? { scheduledAt } : {}),
            },
          }),
        ),
    })),
  });
  return { trip, quotes };
}

export function BookRide({
  countryId,
  initial,
  onRequested,
}: {
  countryId: string;
  initial?: Trip;
  onRequested: (ride: Ride) => void;
}) {
  const [pickup, setPickup] = useState(initial?.pickup);
  const [destination, setDestination] = useState<(Point & { name?: string }) | undefined>(initial?.destination);
  const [tapSets, setTapSets] = useState<'pickup' | 'destination'>(initial?.pickup ? 'destination' : 'pickup');
  // Bumped when search picks the destination: the map then shows the pickup and it (a tap does not move the map).
  const [searchFit, setSearchFit] = useState(0);
  const [gps, setGps] = useState<string>();
  const [noSearch, setNoSearch] = useState(false);
  const [vehicle, setVehicle] = useState<VehicleType>();
  const [requoted, setRequoted] = useState(false);
  const to = useMemo(() => destination && { lat: destination.lat, lng: destination.lng }, [destination]);
  const [when, setWhen] = useState<RideWhen>(RIDE_NOW);
  const countries = useCountries();
  // The booked time's days and slots are the country's (section 22).
  const timeZone = countries.data?.items.find((c) => c.id === countryId)?.timeZone ?? 'UTC';
  const scheduledAt = rideScheduledAt(when, timeZone);
  const { trip, quotes } = useQuotes(pickup, to, countryId, scheduledAt);

  const locate = () => {
    if (!('geolocation' in navigator)) {
      setGps('This browser cannot tell the position: tap on the map to set the pickup.');
      return;
    }
    setGps('Finding your position…');
    navigator.geolocation.getCurrentPosition(
      (p) => {
        setPickup({ lat: Number(p.coords.latitude.toFixed(6)), lng: Number(p.coords.longitude.toFixed(6)) });
        setTapSets('destination');
        setGps(undefined);
      },
      (err) => setGps(`No position (${err.message || 'refused'}): tap on the map to set the pickup.`),
      { enableHighAccuracy: true, timeout: 15_000, maximumAge: 30_000 },
    );
  };
  useEffect(() => {
    if (!pickup) locate();
    // eslint-disable-next-line react-hooks/exhaustive-deps -- on the first render only: later the pickup is the rider's choice
  }, []);

  // crypto.randomUUID exists only in secure contexts; getRandomValues everywhere.
  const idempotencyKey = useMemo(
    () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join(''),
    // eslint-disable-next-line react-hooks/exhaustive-deps -- a new key for each new trip or vehicle: the key names the booking, which the two describe
    [trip, vehicle],
  );
  const chosen = vehicle ? quotes[VEHICLE_TYPES.indexOf(vehicle)] : undefined;
  const request = useMutation({
    mutationFn: () =>
      ok(
        api.POST('/api/rides', {
          body: {
            pickupLocation: pickup!,
            destinationLocation: { lat: destination!.lat, lng: destination!.lng },
            vehicleType: vehicle!,
            countryId,
            quoteId: chosen!.data!.id,
            ...(scheduledAt ? { scheduledAt } : {}),
          },
          headers: { 'idempotency-key': idempotencyKey },
        }),
      ),
    onMutate: () => setRequoted(false),
    onError: (err) => {
      if (err instanceof ApiError && (err.code === 'QUOTE_EXPIRED' || err.code === 'QUOTE_NOT_FOUND')) {
        setRequoted(true);
        void chosen?.refetch();
      }
    },
    onSuccess: (ride) => onRequested(ride as Ride),
  });

  const points = useMemo(() => {
    const out: MapPoint[] = [];
    if (pickup) out.push({ id: 'pickup', ...pickup, label: 'Pickup', kind: 'pickup' });
    if (destination)
      out.push({
        id: 'dropoff',
        lat: destination.lat,
        lng: destination.lng,
        label: destination.name ? `Destination: ${destination.name}` : 'Destination',
        kind: 'dropoff',
      });
    return out;
  }, [pickup, destination]);

  const onPick = (lat: number, lng: number) => {
    if (tapSets === 'pickup') {
      setPickup({ lat, lng });
      setTapSets('destination');
    } else setDestination({ lat, lng });
  };

  // The same refusal (a point outside the country, a trip too long) comes for every vehicle type: said once.
  const errors = [...new Set(quotes.filter((q) => q.error).map((q) => errorText(q.error)))];
  const allFailed = trip !== '' && quotes.every((q) => q.error);

  return (
    <>
      <Title>Where to?</Title>
      <Map
        points={points}
        onPick={onPick}
        fitKey={searchFit}
        center={pickup ? [pickup.lat, pickup.lng] : undefined}
        label="Map of the trip: a tap sets the chosen point"
      />
      <div className="tap-target" role="group" aria-label="A tap on the map sets">
        <button
          type="button"
          className="secondary"
          aria-pressed={tapSets === 'pickup'}
          onClick={() => setTapSets('pickup')}
        >
          Tap sets pickup
        </button>
        <button
          type="button"
          className="secondary"
          aria-pressed={tapSets === 'destination'}
          onClick={() => setTapSets('destination')}
        >
          Tap sets destination
        </button>
      </div>
      <dl className="details trip">
        <dt>Pickup</dt>
        <dd data-testid="pickup">{pickup ? fmt(pickup) : 'Not set'}</dd>
        <dt>Destination</dt>
        <dd data-testid="destination">{destination ? (destination.name ?? fmt(destination)) : 'Not set'}</dd>
      </dl>
      {gps && <p role="status">{gps}</p>}
      <button type="button" className="secondary big" onClick={locate}>
        Use my position as pickup
      </button>
      {noSearch ? (
        <p className="notice" role="status">
          Address search is not available here: tap on the map to set the destination.
        </p>
      ) : (
        <DestinationSearch
          countryId={countryId}
          onUnavailable={() => setNoSearch(true)}
          onChoose={(p) => {
            setDestination({ lat: p.location.lat, lng: p.location.lng, name: p.name });
            setSearchFit((n) => n + 1);
            setTapSets('destination');
          }}
        />
      )}
      {pickup && destination && (
        <RideWhenPicker value={when} onChange={setWhen} timeZone={timeZone} nowMs={Date.now()} />
      )}
      {trip !== '' && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (chosen?.data) request.mutate();
          }}
        >
          <fieldset className="choices">
            <legend>Choose a ride</legend>
            {errors.length > 0 && allFailed
              ? errors.map((m) => (
                  <p key={m} className="error" role="alert">
                    {m}
                  </p>
                ))
              : VEHICLE_TYPES.map((v, i) => {
                  const q = quotes[i];
                  return (
                    <label key={v} className="choice">
                      <input
                        type="radio"
                        name="vehicle"
                        value={v}
                        checked={vehicle === v}
                        disabled={!q.data}
                        onChange={() => setVehicle(v)}
                      />
                      <span className="choice-name">{vehicleName(v)}</span>{' '}
                      <span className="choice-price">
                        {q.data
                          ? formatMoney(q.data.amount, q.data.currency)
                          : q.error
                            ? 'Not available'
                            : 'Getting a price…'}
                      </span>{' '}
                      <span className="choice-eta">
                        {q.data
                          ? q.data.pickupEtaSeconds === null
                            ? 'no driver nearby yet'
                            : `pickup in ${minutes(q.data.pickupEtaSeconds)}`
                          : q.error
                            ? errorText(q.error)
                            : ''}
                      </span>
                    </label>
                  );
                })}
          </fieldset>
          {chosen?.data && (
            <p className="muted" data-testid="quote">
              {(chosen.data.distanceMeters / 1000).toFixed(1)} km, about {minutes(chosen.data.durationSeconds)}. This
              price holds until{' '}
              <time dateTime={chosen.data.expiresAt}>{new Date(chosen.data.expiresAt).toLocaleTimeString()}</time>.
            </p>
          )}
          {chosen?.data && scheduledAt && <QuoteTiming quote={chosen.data} timeZone={timeZone} nowMs={Date.now()} />}
          {requoted && (
            <p className="notice" role="status">
              Here is a new price: check it and request the ride again.
            </p>
          )}
          <ApiErrorBox error={request.error} />
          <BusyButton type="submit" className="big" busy={request.isPending} disabled={!chosen?.data}>
            {scheduledAt ? 'Book ride' : 'Request ride'}
          </BusyButton>
        </form>
      )}
    </>
  );
}
