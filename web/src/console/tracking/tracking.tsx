// /t/:token — the public tracking page (contract section 14): no account, no personal data (the
// server sends none: no names of contacts, phones, addresses or ids).
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { ok, publicApi } from '../../shared/api/client';
import { ApiError } from '../../shared/api/errors';
import { Map, type MapPoint } from '../../shared/map';
import { queryKeys } from '../../shared/query-keys';
import { LiveBadge, useStream } from '../../shared/streams';
import { ErrorBox, PageTitle, StatusBadge, formatTime } from '../../shared/ui';

const FINAL = ['DELIVERED', 'FAILED', 'CANCELLED'];

/** A promised window in the job's own time zone (section 22): "Mon 8 Dec, 14:00–15:00 (Africa/Nairobi)". */
export function windowText(w: { start: string; end: string }, timeZone: string | null): string {
  const zone = timeZone ?? 'UTC';
  const day = new Intl.DateTimeFormat(undefined, { weekday: 'short', day: 'numeric', month: 'short', timeZone: zone });
  const time = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', timeZone: zone });
  const start = new Date(w.start);
  const end = new Date(w.end);
  const sameDay = day.format(start) === day.format(end);
  return `${day.format(start)}, ${time.format(start)}–${sameDay ? '' : `${day.format(end)}, `}${time.format(end)} (${zone})`;
}

export function TrackingPage({ token }: { token: string }) {
  const client = useQueryClient();
  const path = `/api/tracking/${encodeURIComponent(token)}`;
  // Without the console's session: the page is the same for anyone holding the link.
  const tracking = useQuery({
    queryKey: queryKeys.tracking(token),
    queryFn: () => ok(publicApi.GET('/api/tracking/{token}', { params: { path: { token } } })),
    retry: false,
  });
  const [driverAt, setDriverAt] = useState<{ location: { lat: number; lng: number }; at: string }>();
  const [eta, setEta] = useState<number | null>(null);
  const t = tracking.data;
  const live = useStream(
    t && !FINAL.includes(t.status) ? `${path}/stream` : undefined,
    {
      // The view read again carries the new ETA target; until then the old one would mislead.
      status: () => {
        setEta(null);
        void client.invalidateQueries({ queryKey: queryKeys.tracking(token) });
      },
      resync: () => void client.invalidateQueries({ queryKey: queryKeys.tracking(token) }),
      location: (data) => setDriverAt(data as { location: { lat: number; lng: number }; at: string }),
      eta: (data) => setEta((data as { etaSeconds: number }).etaSeconds),
    },
    false,
  );
  const points = useMemo<MapPoint[]>(() => {
    if (!t) return [];
    const out: MapPoint[] = [
      { id: 'pickup', ...t.pickup.location, label: 'Pickup', kind: 'pickup' },
      { id: 'dropoff', ...t.dropoff.location, label: 'Drop-off', kind: 'dropoff' },
    ];
    const d = t.driver && !FINAL.includes(t.status) ? (driverAt?.location ?? t.driver.location) : undefined;
    if (d) out.push({ id: 'driver', ...d, label: 'Driver', kind: 'driver' });
    return out;
  }, [t, driverAt]);
  const etaSeconds = eta ?? t?.etaSeconds ?? null;

  return (
    <>
      <header className="topbar">
        <span className="brand">Delivery tracking</span>
      </header>
      <main id="main">
        <div className="page-head">
          <PageTitle>Your delivery</PageTitle>
          {t && <StatusBadge status={t.status} />}
          {t && !FINAL.includes(t.status) && <LiveBadge state={live} />}
        </div>
        {tracking.error instanceof ApiError && tracking.error.status === 404 ? (
          <p role="alert" className="error">
            This tracking link is unknown or has expired. Ask the sender for a new one.
          </p>
        ) : tracking.error ? (
          <ErrorBox error={tracking.error} />
        ) : !t ? (
          <p role="status">Loading…</p>
        ) : (
          <div className="columns">
            <div>
              {etaSeconds !== null && !FINAL.includes(t.status) && (
                <p className="eta" data-testid="eta">
                  {t.status === 'ASSIGNED' ? 'Driver at the pickup in about' : 'Arriving in about'}{' '}
                  {Math.max(1, Math.round(etaSeconds / 60))} min
                </p>
              )}
              {(t.pickupWindow || t.dropoffWindow || t.scheduledAt) && (
                <section aria-labelledby="promised-heading" data-testid="promised">
                  <h2 id="promised-heading">Promised</h2>
                  {t.pickupWindow && <p>Pickup: {windowText(t.pickupWindow, t.timeZone)}</p>}
                  {t.dropoffWindow && <p>Delivery: {windowText(t.dropoffWindow, t.timeZone)}</p>}
                  {t.scheduledAt && (
                    <p>
                      Pickup at: {windowText({ start: t.scheduledAt, end: t.scheduledAt }, t.timeZone).split('–')[0]}
                    </p>
                  )}
                </section>
              )}
              <section aria-labelledby="driver-heading">
                <h2 id="driver-heading">Driver</h2>
                {t.driver ? (
                  <p>
                    {t.driver.firstName}, {t.driver.vehicleType.toLowerCase()} {t.driver.vehiclePlate}
                    {driverAt && !FINAL.includes(t.status) && (
                      <>
                        <br />
                        <span data-testid="position">
                          Position at <time dateTime={driverAt.at}>{formatTime(driverAt.at)}</time>
                        </span>
                      </>
                    )}
                  </p>
                ) : (
                  <p>A driver has not been assigned yet.</p>
                )}
              </section>
              <section aria-labelledby="timeline-heading">
                <h2 id="timeline-heading">Timeline</h2>
                <ol className="timeline">
                  {t.statusHistory.map((h, i) => (
                    <li key={i}>
                      <StatusBadge status={h.status} /> <time dateTime={h.at}>{formatTime(h.at)}</time>
                    </li>
                  ))}
                </ol>
              </section>
            </div>
            <Map points={points} label="Map of the delivery" />
          </div>
        )}
      </main>
    </>
  );
}
