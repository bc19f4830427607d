// Deliveries: the list (filter, paging, live statuses), the new-delivery form, a delivery's page.
import { useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { ApiError, api, errorText, ok, session, type Schemas } from '../api/client';
import { useStream, LiveBadge } from '../live';
import { Map, type MapPoint } from '../map';
import { Link, navigate } from '../router';
import { BusyButton, ErrorBox, Field, FocusNotice, Money, Notice, PACKAGE_STATUSES, PageTitle, SelectField, StatusBadge, VEHICLE_TYPES, formatMoney, formatTime } from '../ui';
import { useCountries } from './auth';

export type Package = Schemas['/api/packages/{id}']['get']['responses'][200]['content']['application/json'];
type PackageStatus = Package['status'];
type Page = Schemas['/api/packages']['get']['responses'][200]['content']['application/json'];
type Quote = Schemas['/api/quotes']['post']['responses'][201]['content']['application/json'];
type QuoteRequest = Schemas['/api/quotes']['post']['requestBody']['content']['application/json'];
/** Section 14's status event. */
export interface StatusEvent {
  jobType: 'PACKAGE' | 'RIDE';
  jobId: string;
  status: string;
  at: string;
  reason?: string;
}

/** Applies a live status event to the cached lists and the cached package, without a request. */
export function applyStatusEvent(client: QueryClient, event: StatusEvent) {
  if (event.jobType !== 'PACKAGE') return;
  let known = false;
  client.setQueriesData<Page>({ queryKey: ['packages'] }, (page) => {
    if (!page) return page;
    return {
      ...page,
      items: page.items.map((p) => {
        if (p.id !== event.jobId) return p;
        known = true;
        return { ...p, status: event.status as PackageStatus, updatedAt: event.at };
      }),
    };
  });
  client.setQueryData<Package>(['package', event.jobId], (p) =>
    p && p.status !== event.status
      ? { ...p, status: event.status as PackageStatus, updatedAt: event.at, statusHistory: [...p.statusHistory, { status: event.status as PackageStatus, at: event.at, ...(event.reason ? { reason: event.reason } : {}) }] }
      : p,
  );
  // A package new to this page, or a driver named or gone: fetch what the event does not carry.
  const driverChanged = event.status === 'ASSIGNED' || event.status === 'PENDING';
  if (!known || driverChanged) void client.invalidateQueries({ queryKey: ['packages'] });
  if (driverChanged) void client.invalidateQueries({ queryKey: ['package', event.jobId] });
}

export function useAccountStream() {
  const client = useQueryClient();
  return useStream('/api/events/stream', {
    status: (data) => applyStatusEvent(client, data as StatusEvent),
    // The server could not replay what was missed (or the stream was reopened): read everything again.
    resync: () => void client.invalidateQueries({ predicate: (q) => q.queryKey[0] === 'packages' || q.queryKey[0] === 'package' }),
  });
}

export function DeliveriesPage() {
  const [status, setStatus] = useState<PackageStatus | ''>('');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const live = useAccountStream();
  const role = session.user?.role;
  const client = useQueryClient();
  // Deliveries this page assigned, with the driver's name (company).
  const [assigned, setAssigned] = useState<Record<string, string>>({});
  const list = useQuery({
    queryKey: ['packages', status, cursor],
    queryFn: async () => {
      const page = await ok(api.GET('/api/packages', { params: { query: { limit: 20, ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) } } }));
      // A cached delivery older than its row here is out of date (a driver named since, say).
      for (const p of page.items) {
        const cached = client.getQueryData<Package>(['package', p.id]);
        if (cached && cached.updatedAt < p.updatedAt) void client.invalidateQueries({ queryKey: ['package', p.id] });
      }
      return page;
    },
  });
  return (
    <>
      <div className="page-head">
        <PageTitle>Deliveries</PageTitle>
        <LiveBadge state={live} />
        {(role === 'BUSINESS' || role === 'CUSTOMER') && (
          <Link to="/deliveries/new" className="button">
            New delivery
          </Link>
        )}
      </div>
      <div className="toolbar">
        <SelectField
          label="Status"
          value={status}
          onChange={(e) => {
            setStatus(e.target.value as PackageStatus | '');
            setCursors([]);
          }}
        >
          <option value="">All</option>
          {PACKAGE_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s.replace(/_/g, ' ')}
            </option>
          ))}
        </SelectField>
        {live === 'unavailable' && (
          <button type="button" className="secondary" onClick={() => void list.refetch()}>
            Refresh
          </button>
        )}
      </div>
      <ErrorBox error={list.error} />
      {list.data && list.data.items.length === 0 && <p>No deliveries{status ? ` with status ${status.replace(/_/g, ' ')}` : ''} yet.</p>}
      {list.data && list.data.items.length > 0 && (
        <table>
          <caption className="sr-only">Deliveries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Delivery</th>
              <th scope="col">Status</th>
              <th scope="col">Pickup</th>
              <th scope="col">Drop-off</th>
              <th scope="col">Driver</th>
              <th scope="col">Price</th>
              <th scope="col">Created</th>
              {role === 'COMPANY' && <th scope="col">Assign</th>}
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((p) => (
              <tr key={p.id}>
                <td>
                  {/* A company reads a pending delivery only here, to assign it (the API shows it no more). */}
                  {role === 'COMPANY' && p.status === 'PENDING' ? p.reference ?? p.parcel.description : <Link to={`/deliveries/${p.id}`}>{p.reference ?? p.parcel.description}</Link>}
                </td>
                <td data-testid="status">
                  <StatusBadge status={p.status} />
                </td>
                <td>{p.pickup.address}</td>
                <td>{p.dropoff.address}</td>
                <td>{p.driver ? `${p.driver.firstName} (${p.driver.vehiclePlate})` : '—'}</td>
                <td data-testid="price">
                  <Money money={p.price} />
                  {p.cancellationFee && <> (cancellation fee <Money money={p.cancellationFee} />)</>}
                </td>
                <td>{formatTime(p.createdAt)}</td>
                {role === 'COMPANY' && (
                  <td>
                    {p.status === 'PENDING' ? (
                      <AssignDriver id={p.id} name={p.reference ?? p.parcel.description} onAssigned={(driver) => setAssigned((a) => ({ ...a, [p.id]: driver }))} />
                    ) : (
                      // The form the user was on goes with the PENDING status: its outcome takes the focus.
                      assigned[p.id] && <FocusNotice>Assigned to {assigned[p.id]}.</FocusNotice>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav aria-label="Pages" className="actions">
        {cursors.length > 0 && (
          <button type="button" className="secondary" onClick={() => setCursors([])}>
            First page
          </button>
        )}
        {list.data?.nextCursor && (
          <button type="button" className="secondary" onClick={() => setCursors([...cursors, list.data!.nextCursor!])}>
            Next page
          </button>
        )}
      </nav>
    </>
  );
}

interface Stop {
  lat: string;
  lng: string;
  address: string;
  contactName: string;
  contactPhone: string;
  notes: string;
}
const emptyStop: Stop = { lat: '', lng: '', address: '', contactName: '', contactPhone: '', notes: '' };

function StopFields({ legend, stop, onChange }: { legend: string; stop: Stop; onChange: (s: Stop) => void }) {
  const set = (key: keyof Stop) => (e: { target: { value: string } }) => onChange({ ...stop, [key]: e.target.value });
  return (
    <fieldset>
      <legend>{legend}</legend>
      <div className="row">
        <Field label={`${legend} latitude`} type="number" step="any" min={-90} max={90} required value={stop.lat} onChange={set('lat')} />
        <Field label={`${legend} longitude`} type="number" step="any" min={-180} max={180} required value={stop.lng} onChange={set('lng')} />
      </div>
      <Field label={`${legend} address`} required maxLength={500} value={stop.address} onChange={set('address')} />
      <div className="row">
        <Field label={`${legend} contact name`} required maxLength={200} value={stop.contactName} onChange={set('contactName')} />
        <Field label={`${legend} contact phone`} type="tel" required pattern="\+[1-9][0-9]{6,14}" placeholder="+254712345678" value={stop.contactPhone} onChange={set('contactPhone')} />
      </div>
      <Field label={`${legend} notes`} maxLength={1000} value={stop.notes} onChange={set('notes')} />
    </fieldset>
  );
}

const QUOTE_DELAY_MS = 600;

/** The quote for the form's trip, asked once the inputs have been still for a moment. */
function useQuote(pickup: Stop, dropoff: Stop, vehicleType: QuoteRequest['vehicleType'], countryId: string) {
  const ready = [pickup.lat, pickup.lng, dropoff.lat, dropoff.lng].every((v) => v.trim() !== '' && Number.isFinite(Number(v))) && countryId !== '';
  const key = ready ? JSON.stringify([pickup.lat, pickup.lng, dropoff.lat, dropoff.lng, vehicleType, countryId]) : '';
  const [settled, setSettled] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setSettled(key), QUOTE_DELAY_MS);
    return () => clearTimeout(timer);
  }, [key]);
  const query = useQuery({
    queryKey: ['quote', settled],
    enabled: settled !== '',
    retry: false,
    // A quote is a reservation of a price: asked again only when the trip changes or it expired.
    staleTime: Infinity,
    gcTime: 0,
    queryFn: () => {
      const [pLat, pLng, dLat, dLng] = (JSON.parse(settled) as string[]).map(Number);
      return ok(
        api.POST('/api/quotes', {
          body: { kind: 'PACKAGE', pickup: { location: { lat: pLat!, lng: pLng! } }, dropoff: { location: { lat: dLat!, lng: dLng! } }, vehicleType, countryId },
        }),
      );
    },
  });
  // Until the debounce catches up, the quote on hand is for the trip as it was: not to be sent.
  return { query, current: settled === key && key !== '' ? query.data : undefined };
}

function QuotePanel({ quote }: { quote: { data?: Quote; error: unknown; isFetching: boolean } }) {
  const q = quote.data;
  return (
    <section aria-labelledby="price-heading" className="quote">
      <h2 id="price-heading">Price</h2>
      <div role="status" data-testid="quote">
        {quote.isFetching ? (
          <p>Getting a price…</p>
        ) : quote.error ? (
          <p className="error">{errorText(quote.error)}</p>
        ) : q ? (
          <>
            <p className="price">{formatMoney(q.amount, q.currency)}</p>
            <p>
              {(q.distanceMeters / 1000).toFixed(1)} km, about {Math.max(1, Math.round(q.durationSeconds / 60))} min
              {q.breakdown.surge > 1 ? `, surge ×${q.breakdown.surge.toFixed(1)} (${formatMoney(q.breakdown.surgeAmount, q.currency)})` : ''}.
              <br />
              This price holds until <time dateTime={q.expiresAt}>{new Date(q.expiresAt).toLocaleTimeString()}</time>.
            </p>
          </>
        ) : (
          <p className="hint">Set the pickup, the drop-off, the vehicle type and the country to see the price.</p>
        )}
      </div>
    </section>
  );
}

export function NewDeliveryPage() {
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
  const { query: quote, current: currentQuote } = useQuote(pickup, dropoff, vehicleType, countryId);
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
      void client.invalidateQueries({ queryKey: ['packages'] });
      client.setQueryData(['package', pkg.id], pkg);
      if ((pkg as { deliveryCode?: string }).deliveryCode) setCreated(pkg);
      else navigate(`/deliveries/${pkg.id}`);
    },
  });
  // crypto.randomUUID exists only in secure contexts (https, localhost); getRandomValues everywhere.
  const idempotencyKey = useMemo(() => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join(''), []);

  const points = useMemo(() => {
    const out: MapPoint[] = [];
    if (pickup.lat && pickup.lng) out.push({ id: 'pickup', lat: Number(pickup.lat), lng: Number(pickup.lng), label: 'Pickup', kind: 'pickup' });
    if (dropoff.lat && dropoff.lng) out.push({ id: 'dropoff', lat: Number(dropoff.lat), lng: Number(dropoff.lng), label: 'Drop-off', kind: 'dropoff' });
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
          Delivery code: <strong className="secret">{created.deliveryCode}</strong>. Give it to the recipient: the driver needs it to complete the delivery. It is shown only now.
        </Notice>
        <Link to={`/deliveries/${created.id}`} className="button">
          Open the delivery
        </Link>
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
              <input type="radio" name="target" checked={target === 'pickup'} onChange={() => setTarget('pickup')} /> Pickup
            </label>
            <label className="inline">
              <input type="radio" name="target" checked={target === 'dropoff'} onChange={() => setTarget('dropoff')} /> Drop-off
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
            <Field label="Parcel description" required maxLength={1000} value={parcel.description} onChange={(e) => setParcel({ ...parcel, description: e.target.value })} />
            <div className="row">
              <Field label="Weight (kg)" type="number" step="any" min={0.001} max={50000} value={parcel.weightKg} onChange={(e) => setParcel({ ...parcel, weightKg: e.target.value })} />
              <SelectField label="Size" value={parcel.size} onChange={(e) => setParcel({ ...parcel, size: e.target.value })}>
                <option value="">Not given</option>
                <option value="SMALL">Small</option>
                <option value="MEDIUM">Medium</option>
                <option value="LARGE">Large</option>
              </SelectField>
            </div>
          </fieldset>
          <div className="row">
            <SelectField label="Vehicle type" value={vehicleType} onChange={(e) => setVehicleType(e.target.value as typeof vehicleType)}>
              {VEHICLE_TYPES.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </SelectField>
            <SelectField label="Country" required value={countryId} onChange={(e) => setCountryId(e.target.value)}>
              <option value="">Choose…</option>
              {countries.data?.items.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </SelectField>
          </div>
          <Field label="Reference" maxLength={100} value={reference} onChange={(e) => setReference(e.target.value)} hint="Your own order number (optional)" />
          <label className="inline">
            <input type="checkbox" checked={requireDeliveryCode} onChange={(e) => setRequireDeliveryCode(e.target.checked)} /> Require a delivery code at drop-off
          </label>
          <QuotePanel quote={quote} />
          {requoted ? (
            <p className="error" role="alert">
              The price had expired. Here is a new one: check it and create the delivery again.
            </p>
          ) : (
            <ErrorBox error={create.error ?? countries.error} />
          )}
          <BusyButton type="submit" busy={create.isPending}>
            Create delivery
          </BusyButton>
        </div>
      </form>
    </>
  );
}

export function DeliveryPage({ id }: { id: string }) {
  const client = useQueryClient();
  const role = session.user?.role;
  const pkg = useQuery({ queryKey: ['package', id], queryFn: () => ok(api.GET('/api/packages/{id}', { params: { path: { id } } })) });
  const [driverAt, setDriverAt] = useState<{ location: { lat: number; lng: number }; at: string }>();
  const [eta, setEta] = useState<{ etaSeconds: number; to: string }>();
  const final = pkg.data && ['DELIVERED', 'FAILED', 'CANCELLED'].includes(pkg.data.status);
  const live = useStream(pkg.data && !final ? `/api/packages/${id}/track` : undefined, {
    status: (data) => {
      applyStatusEvent(client, data as StatusEvent);
      // The next position brings the ETA to the new target (the drop-off after the pickup).
      setEta(undefined);
    },
    location: (data) => setDriverAt(data as { location: { lat: number; lng: number }; at: string }),
    eta: (data) => setEta(data as { etaSeconds: number; to: string }),
    resync: () => void client.invalidateQueries({ queryKey: ['package', id] }),
  });
  const [reason, setReason] = useState('');
  const cancel = useMutation({
    mutationFn: () => ok(api.POST('/api/packages/{id}/cancel', { params: { path: { id } }, body: reason ? { reason } : {} })),
    onSuccess: (p) => {
      client.setQueryData(['package', id], p);
      void client.invalidateQueries({ queryKey: ['packages'] });
    },
  });
  const [copied, setCopied] = useState(false);

  const p = pkg.data;
  const points = useMemo(() => {
    if (!p) return [];
    const out: MapPoint[] = [
      { id: 'pickup', ...p.pickup.location, label: `Pickup: ${p.pickup.address}`, kind: 'pickup' },
      { id: 'dropoff', ...p.dropoff.location, label: `Drop-off: ${p.dropoff.address}`, kind: 'dropoff' },
    ];
    const d = p.driver && !final ? (driverAt?.location ?? p.driver.location) : undefined;
    if (d) out.push({ id: 'driver', lat: d.lat, lng: d.lng, label: `Driver ${p.driver?.firstName ?? ''}`, kind: 'driver' });
    return out;
  }, [p, driverAt, final]);

  if (pkg.error) {
    return (
      <>
        <PageTitle>Delivery</PageTitle>
        <ErrorBox error={pkg.error} />
      </>
    );
  }
  if (!p) return <p role="status">Loading…</p>;
  const { trackingUrl } = p;
  const canCancel = (p.status === 'PENDING' || p.status === 'ASSIGNED') && (role === 'ADMIN' || role === 'BUSINESS' || role === 'CUSTOMER');

  return (
    <>
      <div className="page-head">
        <PageTitle>Delivery {p.reference ?? p.id.slice(0, 8)}</PageTitle>
        <StatusBadge status={p.status} />
        {!final && <LiveBadge state={live} />}
      </div>
      <div className="columns">
        <div>
          <section aria-labelledby="timeline-heading">
            <h2 id="timeline-heading">Timeline</h2>
            <ol className="timeline">
              {p.statusHistory.map((h, i) => (
                <li key={i}>
                  <StatusBadge status={h.status} /> <time dateTime={h.at}>{formatTime(h.at)}</time>
                  {h.reason ? ` — ${h.reason}` : ''}
                </li>
              ))}
            </ol>
          </section>
          <section aria-labelledby="driver-heading">
            <h2 id="driver-heading">Driver</h2>
            {p.driver ? (
              <p>
                {p.driver.firstName}, {p.driver.vehicleType} {p.driver.vehiclePlate}, <a href={`tel:${p.driver.phone}`}>{p.driver.phone}</a>
                {eta && !final && (
                  <>
                    <br />
                    <span data-testid="eta">About {Math.max(1, Math.round(eta.etaSeconds / 60))} min to {eta.to === 'PICKUP' ? 'the pickup' : 'the drop-off'}</span>
                  </>
                )}
                {driverAt && !final && (
                  <>
                    <br />
                    <span data-testid="position">
                      Position at <time dateTime={driverAt.at}>{formatTime(driverAt.at)}</time>
                    </span>
                  </>
                )}
              </p>
            ) : (
              <p>No driver yet.</p>
            )}
          </section>
          <section aria-labelledby="details-heading">
            <h2 id="details-heading">Details</h2>
            <dl className="details">
              <dt>Pickup</dt>
              <dd>
                {p.pickup.address} — {p.pickup.contactName} {p.pickup.contactPhone}
              </dd>
              <dt>Drop-off</dt>
              <dd>
                {p.dropoff.address} — {p.dropoff.contactName} {p.dropoff.contactPhone}
              </dd>
              <dt>Parcel</dt>
              <dd>
                {p.parcel.description}
                {p.parcel.size ? `, ${p.parcel.size.toLowerCase()}` : ''}
                {p.parcel.weightKg ? `, ${p.parcel.weightKg} kg` : ''}
              </dd>
              <dt>Vehicle</dt>
              <dd>{p.vehicleType}</dd>
              <dt>Price</dt>
              <dd data-testid="price">
                <Money money={p.price} />
              </dd>
              {p.cancellationFee && (
                <>
                  <dt>Cancellation fee</dt>
                  <dd data-testid="cancellation-fee">
                    <Money money={p.cancellationFee} />
                  </dd>
                </>
              )}
              <dt>Created</dt>
              <dd>{formatTime(p.createdAt)}</dd>
            </dl>
          </section>
          <section aria-labelledby="tracking-heading">
            <h2 id="tracking-heading">Tracking link</h2>
            <div className="row">
              <Field label="Tracking link" readOnly value={trackingUrl} />
              <button
                type="button"
                className="secondary"
                onClick={() => void navigator.clipboard?.writeText(trackingUrl).then(() => setCopied(true), () => setCopied(false))}
              >
                Copy link
              </button>
              {copied && <span role="status">Copied</span>}
            </div>
          </section>
          {(canCancel || cancel.isSuccess) && (
            <section aria-labelledby="cancel-heading">
              <h2 id="cancel-heading">Cancel</h2>
              {/* The form goes once the delivery is cancelled: its outcome takes the focus in its place. */}
              {!canCancel ? (
                <FocusNotice>
                  Delivery cancelled.
                  {p.cancellationFee && (
                    <>
                      {' '}
                      Cancellation fee: <Money money={p.cancellationFee} />.
                    </>
                  )}
                </FocusNotice>
              ) : (
                <form
                  onSubmit={(e) => {
                    e.preventDefault();
                    cancel.mutate();
                  }}
                >
                  <Field label="Reason for cancelling" maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
                  <ErrorBox error={cancel.error} />
                  <BusyButton type="submit" className="danger" busy={cancel.isPending}>
                    Cancel delivery
                  </BusyButton>
                </form>
              )}
            </section>
          )}
        </div>
        <Map points={points} label="Map of the pickup, the drop-off and the driver" />
      </div>
    </>
  );
}

function AssignDriver({ id, name, onAssigned }: { id: string; name: string; onAssigned: (driver: string) => void }) {
  const client = useQueryClient();
  const drivers = useQuery({ queryKey: ['company-drivers'], queryFn: () => ok(api.GET('/api/companies/me/drivers', { params: { query: { limit: 100 } } })) });
  const [driverId, setDriverId] = useState('');
  const assign = useMutation({
    mutationFn: () => ok(api.POST('/api/packages/{id}/assign', { params: { path: { id } }, body: { driverId } })),
    onSuccess: (p) => {
      const driver = drivers.data?.items.find((d) => d.id === driverId);
      onAssigned(driver ? `${driver.firstName} ${driver.lastName}` : 'the driver');
      client.setQueryData(['package', id], p);
      void client.invalidateQueries({ queryKey: ['packages'] });
    },
  });
  return (
    <form className="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        assign.mutate();
      }}
    >
      <SelectField label={`Driver for ${name}`} required value={driverId} onChange={(e) => setDriverId(e.target.value)}>
        <option value="">Choose a driver…</option>
        {drivers.data?.items.map((d) => (
          <option key={d.id} value={d.id}>
            {d.firstName} {d.lastName} — {d.vehicleType} {d.vehiclePlate} ({d.availability.toLowerCase()})
          </option>
        ))}
      </SelectField>
      <ErrorBox error={assign.error ?? drivers.error} />
      <BusyButton type="submit" busy={assign.isPending} disabled={!driverId} aria-label={`Assign ${name}`}>
        Assign
      </BusyButton>
    </form>
  );
}
