// The new-delivery form (the console's for businesses, the customer app's "Send a package"): pickup and drop-off picked on the map or typed, the price quoted once the
// trip is settled, and the created delivery (its delivery code shown once).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { ApiError, errorText } from '../api/errors';
import type { Schemas } from '../api/types';
import { CountryField, useCountries } from '../countries';
import { Map, type MapPoint } from '../map';
import { queryKeys } from '../query-keys';
import { BusyButton, Field, Notice, PageTitle, SelectField, VEHICLE_TYPES, formatMoney } from '../ui';
import {
  ASAP_DELIVERY,
  ApiErrorBox,
  DeliveryWhenPicker,
  QuoteTiming,
  deliveryWindows,
  type DeliveryWhen,
} from '../when';
import { StopFields, emptyStop, type Stop } from './stop-fields';
import type { Package } from './types';

type Quote = Schemas['/api/quotes']['post']['responses'][201]['content']['application/json'];
type QuoteRequest = Schemas['/api/quotes']['post']['requestBody']['content']['application/json'];

const QUOTE_DELAY_MS = 600;

/** The quote for the form's trip, asked once the inputs have been still for a moment. */
function useQuote(
  pickup: Stop,
  dropoff: Stop,
  vehicleType: QuoteRequest['vehicleType'],
  countryId: string,
  windows: Pick<QuoteRequest, 'pickupWindow' | 'dropoffWindow'>,
) {
  const ready =
    [pickup.lat, pickup.lng, dropoff.lat, dropoff.lng].every((v) => v.trim() !== '' && Number.isFinite(Number(v))) &&
    countryId !== '';
  const key = ready
    ? JSON.stringify([pickup.lat, pickup.lng, dropoff.lat, dropoff.lng, vehicleType, countryId, windows])
    : '';
  const [settled, setSettled] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setSettled(key), QUOTE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [key]);
  const query = useQuery({
    queryKey: queryKeys.quote(settled),
    enabled: settled !== '',
    retry: false,
    // A quote is a reservation of a price: asked again only when the trip changes or it expired.
    staleTime: Infinity,
    gcTime: 0,
    queryFn: () => {
      const parsed = JSON.parse(settled) as unknown[];
      const [pLat, pLng, dLat, dLng] = parsed.slice(0, 4).map(Number);
      return ok(
        api.POST('/api/quotes', {
          body: {
            kind: 'PACKAGE',
            pickup: { location: { lat: pLat!, lng: pLng! } },
            dropoff: { location: { lat: dLat!, lng: dLng! } },
            vehicleType,
            countryId,
            ...(parsed[6] as typeof windows),
          },
        }),
      );
    },
  });
  // Until the debounce catches up, the quote on hand is for the trip as it was: not to be sent.
  return { query, current: settled === key && key !== '' ? query.data : undefined };
}

function QuotePanel({
  quote,
  timeZone,
}: {
  quote: { data?: Quote; error: unknown; isFetching: boolean };
  timeZone: string;
}) {
  const q = quote.data;
  return (
    <section aria-labelledby="price-heading" className="quote">
      <h2 id="price-heading">Price</h2>
      <div role="status" data-testid="quote">
        {quote.isFetching ? (
          <p>Getting a price…</p>
        ) : quote.error ? (
          <p className="error">
            {errorText(quote.error)}
            {quote.error instanceof ApiError && quote.error.code ? (
              <>
                {' '}
                <code className="error-code">{quote.error.code}</code>
              </>
            ) : null}
          </p>
        ) : q ? (
          <>
            <p className="price">{formatMoney(q.amount, q.currency)}</p>
            <p>
              {(q.distanceMeters / 1000).toFixed(1)} km, about {Math.max(1, Math.round(q.durationSeconds / 60))} min
              {q.breakdown.surge > 1
                ? `, surge ×${q.breakdown.surge.toFixed(1)} (${formatMoney(q.breakdown.surgeAmount, q.currency)})`
                : ''}
              .
              <br />
              This price holds until <time dateTime={q.expiresAt}>{new Date(q.expiresAt).toLocaleTimeString()}</time>.
            </p>
            <QuoteTiming quote={q} timeZone={timeZone} nowMs={Date.now()} />
          </>
        ) : (
          <p className="hint">Set the pickup, the drop-off, the vehicle type and the country to see the price.</p>
        )}
      </div>
    </section>
  );
}

/**
 * `onOpen` shows a delivery's page (the console navigates to `href(id)`; an app without addresses
 * switches its screen).
 */
export function NewDeliveryPage({ href, onOpen }: { href: (id: string) => string; onOpen: (id: string) => void }) {
  const client = useQueryClient();
  const countries = useCountries();
  const [pickup, setPickup] = useState<Stop>(emptyStop);
  const [dropoff, setDropoff] = useState<Stop>(emptyStop);
  const [target, setTarget] = useState<'pickup' | 'dropoff'>('pickup');
  const [parcel, setParcel] = useState({ description: '', weightKg: '', size: '' });
  const [vehicleType, setVehicleType] = useState<(typeof VEHICLE_TYPES)[number]>('BIKE');
  const [countryId, setCountryId] = useState('');
  const [reference, setReference] = useState('');
  const [requireDeliveryCode, setRequireDeliveryCode] = useState(false);
  const [created, setCreated] = useState<Package & { deliveryCode?: string }>();
  const [when, setWhen] = useState<DeliveryWhen>(ASAP_DELIVERY);
  const jobCountry = countries.data?.items.find((c) => c.id === (countryId || countries.data?.items[0]?.id));
  // Days and slots are the job's country's (section 22); the API defaults the package's zone to it too.
  const timeZone = jobCountry?.timeZone ?? 'UTC';
  const windows = useMemo(() => deliveryWindows(when, timeZone), [when, timeZone]);
  const { query: quote, current: currentQuote } = useQuote(pickup, dropoff, vehicleType, countryId, windows);
  const [requoted, setRequoted] = useState(false);

  const stopBody = (s: Stop) => ({
    location: { lat: Number(s.lat), lng: Number(s.lng) },
    address: s.address,
    contactName: s.contactName,
    contactPhone: s.contactPhone,
    ...(s.notes ? { notes: s.notes } : {}),
  });
  const create = useMutation({
    mutationFn: () =>
      ok(
        api.POST('/api/packages', {
          body: {
            pickup: stopBody(pickup),
            dropoff: stopBody(dropoff),
            vehicleType,
            countryId: countryId || countries.data?.items[0]?.id || '',
            parcel: {
              description: parcel.description,
              ...(parcel.weightKg ? { weightKg: Number(parcel.weightKg) } : {}),
              ...(parcel.size ? { size: parcel.size as 'SMALL' | 'MEDIUM' | 'LARGE' } : {}),
            },
            ...(reference ? { reference } : {}),
            ...(requireDeliveryCode ? { requireDeliveryCode } : {}),
            ...windows,
            ...(currentQuote ? { quoteId: currentQuote.id } : {}),
          },
          // A double submit (or a retry after a lost answer) creates one package.
          headers: { 'idempotency-key': idempotencyKey },
        }),
      ),
    onMutate: () => setRequoted(false),
    onError: (err) => {
      if (err instanceof ApiError && (err.code === 'QUOTE_EXPIRED' || err.code === 'QUOTE_NOT_FOUND')) {
        setRequoted(true);
        void quote.refetch();
      }
    },
    onSuccess: (pkg) => {
      void client.invalidateQueries({ queryKey: queryKeys.packages });
      client.setQueryData(queryKeys.package(pkg.id), pkg);
      if ((pkg as { deliveryCode?: string }).deliveryCode) setCreated(pkg);
      else onOpen(pkg.id);
    },
  });
  // crypto.randomUUID exists only in secure contexts (https, localhost); getRandomValues everywhere.
  const idempotencyKey = useMemo(
    () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join(''),
    [],
  );

  const points = useMemo(() => {
    const out: MapPoint[] = [];
    if (pickup.lat && pickup.lng)
      out.push({ id: 'pickup', lat: Number(pickup.lat), lng: Number(pickup.lng), label: 'Pickup', kind: 'pickup' });
    if (dropoff.lat && dropoff.lng)
      out.push({
        id: 'dropoff',
        lat: Number(dropoff.lat),
        lng: Number(dropoff.lng),
        label: 'Drop-off',
        kind: 'dropoff',
      });
    return out;
  }, [pickup.lat, pickup.lng, dropoff.lat, dropoff.lng]);

  const onPick = (lat: number, lng: number) => {
    if (target === 'pickup') {
      setPickup((s) => ({ ...s, lat: String(lat), lng: String(lng) }));
      setTarget('dropoff');
    } else setDropoff((s) => ({ ...s, lat: String(lat), lng: String(lng) }));
  };

  if (created) {
    return (
      <>
        <PageTitle>Delivery created</PageTitle>
        <Notice>
          Delivery code: <strong className="secret">{created.deliveryCode}</strong>. Give it to the recipient: the
          driver needs it to complete the delivery. It is shown only now.
        </Notice>
        <a
          href={href(created.id)}
          className="button"
          onClick={(e) => {
            e.preventDefault();
            onOpen(created.id);
          }}
        >
          Open the delivery
        </a>
      </>
    );
  }

  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };

  return (
    <>
      <PageTitle>New delivery</PageTitle>
      <form onSubmit={submit} className="grid-form">
        <section aria-labelledby="map-heading" className="map-panel">
          <h2 id="map-heading">Pick on the map</h2>
          <fieldset>
            <legend>A click on the map sets</legend>
            <label className="inline">
              <input type="radio" name="target" checked={target === 'pickup'} onChange={() => setTarget('pickup')} />{' '}
              Pickup
            </label>
            <label className="inline">
              <input type="radio" name="target" checked={target === 'dropoff'} onChange={() => setTarget('dropoff')} />{' '}
              Drop-off
            </label>
          </fieldset>
          <Map points={points} onPick={onPick} label="Map: click to set the pickup or drop-off" />
          <p className="hint">Or type the coordinates in the fields.</p>
        </section>
        <div>
          <StopFields legend="Pickup" stop={pickup} onChange={setPickup} />
          <StopFields legend="Drop-off" stop={dropoff} onChange={setDropoff} />
          <fieldset>
            <legend>Parcel</legend>
            <Field
              label="Parcel description"
              required
              maxLength={1000}
              value={parcel.description}
              onChange={(e) => setParcel({ ...parcel, description: e.target.value })}
            />
            <div className="row">
              <Field
                label="Weight (kg)"
                type="number"
                step="any"
                min={0.001}
                max={50000}
                value={parcel.weightKg}
                onChange={(e) => setParcel({ ...parcel, weightKg: e.target.value })}
              />
              <SelectField
                label="Size"
                value={parcel.size}
                onChange={(e) => setParcel({ ...parcel, size: e.target.value })}
              >
                <option value="">Not given</option>
                <option value="SMALL">Small</option>
                <option value="MEDIUM">Medium</option>
                <option value="LARGE">Large</option>
              </SelectField>
            </div>
          </fieldset>
          <div className="row">
            <SelectField
              label="Vehicle type"
              value={vehicleType}
              onChange={(e) => setVehicleType(e.target.value as typeof vehicleType)}
            >
              {VEHICLE_TYPES.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </SelectField>
            <CountryField countries={countries.data?.items} value={countryId} onChange={setCountryId} />
          </div>
          <Field
            label="Reference"
            maxLength={100}
            value={reference}
            onChange={(e) => setReference(e.target.value)}
            hint="Your own order number (optional)"
          />
          <label className="inline">
            <input
              type="checkbox"
              checked={requireDeliveryCode}
              onChange={(e) => setRequireDeliveryCode(e.target.checked)}
            />{' '}
            Require a delivery code at drop-off
          </label>
          <DeliveryWhenPicker value={when} onChange={setWhen} timeZone={timeZone} nowMs={Date.now()} />
          <QuotePanel quote={quote} timeZone={timeZone} />
          {requoted ? (
            <p className="error" role="alert">
              The price had expired. Here is a new one: check it and create the delivery again.
            </p>
          ) : (
            <ApiErrorBox error={create.error ?? countries.error} />
          )}
          <BusyButton type="submit" busy={create.isPending}>
            Create delivery
          </BusyButton>
        </div>
      </form>
    </>
  );
}
