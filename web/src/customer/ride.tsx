// A requested ride, live over its event stream (contract section 14): searching, the driver who
// accepted (name, vehicle, plate, rating), the driver's position and ETA on the map, arrived, on the
// trip, completed with the fare; cancelling shows the fee that applies first; an expired ride offers
// to try again.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, ok } from '../shared/api/client';
import { Map, type MapPoint } from '../shared/map';
import { customerKeys } from '../shared/query-keys';
import { RateAndTip } from '../shared/rate';
import { LiveBadge, useStream } from '../shared/streams';
import { BusyButton, ErrorBox, FocusNotice, Money, StatusBadge, Timeline, formatMoney } from '../shared/ui';
import { whenText } from '../shared/zoned-time';
import { ACTIVE_RIDE, vehicleName, type Point, type Ride } from './types';
import { minutes, Title } from './ui';

const HEADLINE: Record<Ride['status'], string> = {
  REQUESTED: 'Looking for a driver…',
  ACCEPTED: 'Your driver is on the way',
  ARRIVED: 'Your driver has arrived',
  IN_PROGRESS: 'On the trip',
  COMPLETED: 'Trip completed',
  CANCELLED: 'Ride cancelled',
  EXPIRED: 'No driver accepted your ride',
};

/** `onAgain` goes back to booking, with the trip to book again (an expired ride's) or none. */
export function RideView({
  id,
  onAgain,
}: {
  id: string;
  onAgain: (trip: { pickup?: Point; destination?: Point }) => void;
}) {
  const client = useQueryClient();
  const ride = useQuery({
    queryKey: customerKeys.ride(id),
    queryFn: async () => (await ok(api.GET('/api/rides/{id}', { params: { path: { id } } }))) as Ride,
  });
  const [driverAt, setDriverAt] = useState<{ location: Point; at: string }>();
  const [eta, setEta] = useState<{ etaSeconds: number; to: 'PICKUP' | 'DROPOFF' }>();
  const [confirming, setConfirming] = useState(false);
  const r = ride.data;
  const active = r ? ACTIVE_RIDE.includes(r.status) : false;
  const refresh = () => void client.invalidateQueries({ queryKey: customerKeys.ride(id) });
  const live = useStream(r && active ? `/api/rides/${id}/track` : undefined, {
    // A new status brings the driver, the fare or the fee with it: the ride is read again.
    status: () => {
      setEta(undefined);
      refresh();
    },
    location: (data) => setDriverAt(data as { location: Point; at: string }),
    eta: (data) => setEta(data as { etaSeconds: number; to: 'PICKUP' | 'DROPOFF' }),
    resync: refresh,
  });
  // The fee is what cancelling would cost at this moment: read again when the customer asks.
  const ask = useMutation({
    mutationFn: async () => (await ok(api.GET('/api/rides/{id}', { params: { path: { id } } }))) as Ride,
    onSuccess: (fresh) => {
      client.setQueryData(customerKeys.ride(id), fresh);
      setConfirming(true);
    },
  });
  const cancel = useMutation({
    mutationFn: async () =>
      (await ok(
        api.POST('/api/rides/{id}/cancel', {
          params: { path: { id } },
          body: { reason: 'Cancelled by the customer in the app' },
        }),
      )) as Ride,
    onSuccess: (fresh) => {
      setConfirming(false);
      client.setQueryData(customerKeys.ride(id), fresh);
    },
  });

  const points = useMemo(() => {
    if (!r) return [];
    const out: MapPoint[] = [
      { id: 'pickup', ...r.pickupLocation, label: 'Pickup', kind: 'pickup' },
      { id: 'dropoff', ...r.destinationLocation, label: 'Destination', kind: 'dropoff' },
    ];
    const d = r.driver && active ? (driverAt?.location ?? r.driver.location) : undefined;
    if (d)
      out.push({ id: 'driver', lat: d.lat, lng: d.lng, label: `Driver ${r.driver?.firstName ?? ''}`, kind: 'driver' });
    return out;
  }, [r, driverAt, active]);

  if (ride.error) return <ErrorBox error={ride.error} />;
  if (!r) return <p role="status">Loading…</p>;
  const d = r.driver;

  return (
    <>
      <div className="page-head">
        <Title>{r.status === 'REQUESTED' && r.scheduledAt ? 'Ride booked' : HEADLINE[r.status]}</Title>
        {active && <LiveBadge state={live} />}
      </div>
      <p>
        <StatusBadge status={r.status} /> {vehicleName(r.vehicleType)}, <Money money={r.price} />
      </p>
      {r.scheduledAt && (
        <p data-testid="scheduled-at">
          Pickup booked for {whenText(Date.parse(r.scheduledAt), r.timeZone ?? 'UTC', Date.now())} (
          {r.timeZone ?? 'UTC'} time).
          {r.status === 'REQUESTED' &&
            ' A driver is looked for shortly before; you are told if nobody has accepted 10 minutes before it.'}
        </p>
      )}
      {d && (
        <section className="card" aria-label="Your driver">
          <p className="driver-name">{d.firstName}</p>
          <p>
            {vehicleName(d.vehicleType)} <strong className="plate">{d.vehiclePlate}</strong>
          </p>
          <p data-testid="rating">
            {d.rating != null
              ? `★ ${d.rating.toFixed(1)}${d.ratingCount ? ` (${d.ratingCount})` : ''}`
              : 'New driver: no rating yet'}
          </p>
          {active && (
            <p>
              <a className="button secondary" href={`tel:${d.phone}`}>
                Call the driver
              </a>
            </p>
          )}
        </section>
      )}
      {active && eta && (
        <p className="eta" data-testid="eta">
          {eta.to === 'PICKUP'
            ? `Driver at the pickup in about ${minutes(eta.etaSeconds)}`
            : `At the destination in about ${minutes(eta.etaSeconds)}`}
        </p>
      )}
      {active && driverAt && (
        <p className="muted" data-testid="position">
          Driver seen at <time dateTime={driverAt.at}>{new Date(driverAt.at).toLocaleTimeString()}</time>
        </p>
      )}
      {(active || r.status === 'COMPLETED') && (
        <Map points={points} fit label="Map of the pickup, the destination and the driver" />
      )}
      {r.status === 'COMPLETED' && (
        <>
          <p className="fare" data-testid="fare">
            Fare: <Money money={r.fare ?? r.price} />
          </p>
          <RateAndTip kind="rides" id={r.id} price={r.fare ?? r.price} tip={r.tip} onChanged={refresh} />
        </>
      )}
      {r.status === 'CANCELLED' && (
        <FocusNotice>
          {r.cancellationFee ? (
            <>
              Cancellation fee: <Money money={r.cancellationFee} />.
            </>
          ) : (
            'No cancellation fee.'
          )}
        </FocusNotice>
      )}
      {r.status === 'EXPIRED' && (
        <>
          <p>No driver could take it within 5 minutes. Drivers may be free now.</p>
          <button
            type="button"
            className="big"
            onClick={() => onAgain({ pickup: r.pickupLocation, destination: r.destinationLocation })}
          >
            Try again
          </button>
        </>
      )}
      {active && r.status !== 'IN_PROGRESS' && (
        <section aria-label="Cancel">
          {confirming ? (
            <div className="card confirm" role="group" aria-label="Cancel the ride?">
              <p data-testid="cancel-fee">
                {r.cancellationFeeNow === undefined
                  ? 'A fee may apply once a driver has accepted.'
                  : r.cancellationFeeNow
                    ? `Cancelling now costs ${formatMoney(r.cancellationFeeNow.amount, r.cancellationFeeNow.currency)}.`
                    : 'Cancelling now is free.'}
              </p>
              <ErrorBox error={cancel.error} />
              <BusyButton type="button" className="big danger" busy={cancel.isPending} onClick={() => cancel.mutate()}>
                Confirm cancellation
              </BusyButton>
              <button type="button" className="big secondary" onClick={() => setConfirming(false)}>
                Keep my ride
              </button>
            </div>
          ) : (
            <>
              <ErrorBox error={ask.error} />
              <BusyButton
                type="button"
                className="big secondary danger-text"
                busy={ask.isPending}
                onClick={() => ask.mutate()}
              >
                Cancel ride
              </BusyButton>
            </>
          )}
        </section>
      )}
      <Timeline history={r.statusHistory} />
      {!active && (
        <button type="button" className="big secondary" onClick={() => onAgain({})}>
          Book another ride
        </button>
      )}
    </>
  );
}
