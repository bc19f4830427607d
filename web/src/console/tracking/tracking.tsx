// /t/:token — the public tracking page (contract section 14): no account, no personal data (the
// server sends none: no names of contacts, phones, addresses or ids). In the reader's language
// (section 27: the browser's, or ?lang= from the link), every word from the web catalog, times in the
// job's own time zone.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useMemo, useRef, useState } from 'react';
import { ok, publicApi } from '../../shared/api/client';
import { ApiError } from '../../shared/api/errors';
import { I18nProvider, pickLocale, useI18n, type I18n, type MessageKey } from '../../shared/i18n/i18n';
import { Map, type MapPoint } from '../../shared/map';
import { queryKeys } from '../../shared/query-keys';
import { useStream, type LiveState } from '../../shared/streams';

const FINAL = ['DELIVERED', 'FAILED', 'CANCELLED'];

const DAY: Intl.DateTimeFormatOptions = { weekday: 'short', day: 'numeric', month: 'short' };
const CLOCK: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit' };

/** The viewer's own zone: the job's is named only when it differs (section 27). */
const viewerZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** A promised window in the job's own time zone (section 22): "Mon 8 Dec, 14:00–15:00 (Africa/Nairobi)". */
export function windowText(i18n: I18n, w: { start: string; end: string }, timeZone: string | null): string {
  const zone = timeZone ?? 'UTC';
  const day = (iso: string) => i18n.dateTime(iso, DAY, zone);
  const time = (iso: string) => i18n.dateTime(iso, CLOCK, zone);
  const start = `${day(w.start)}, ${time(w.start)}`;
  const end = day(w.start) === day(w.end) ? time(w.end) : `${day(w.end)}, ${time(w.end)}`;
  const text = w.start === w.end ? start : i18n.t('tracking.window', { start, end });
  return zone === viewerZone() ? text : i18n.t('tracking.inZone', { time: text, zone });
}

export function TrackingPage({ token }: { token: string }) {
  return (
    <I18nProvider locale={pickLocale()}>
      <Tracking token={token} />
    </I18nProvider>
  );
}

function StatusName({ status }: { status: string }) {
  const { t } = useI18n();
  const key = `status.${status}` as MessageKey;
  return <span className={`badge badge-${status.toLowerCase()}`}>{t(key)}</span>;
}

function Live({ state }: { state: LiveState }) {
  const { t } = useI18n();
  const key = state === 'live' ? 'live.live' : state === 'connecting' ? 'live.connecting' : 'live.unavailable';
  return (
    <span className={`live live-${state}`} role="status">
      {t(key)}
    </span>
  );
}

function Tracking({ token }: { token: string }) {
  const i18n = useI18n();
  const { t } = i18n;
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
  const data = tracking.data;
  const live = useStream(
    data && !FINAL.includes(data.status) ? `${path}/stream` : undefined,
    {
      // The view read again carries the new ETA target; until then the old one would mislead.
      status: () => {
        setEta(null);
        void client.invalidateQueries({ queryKey: queryKeys.tracking(token) });
      },
      resync: () => void client.invalidateQueries({ queryKey: queryKeys.tracking(token) }),
      location: (d) => setDriverAt(d as { location: { lat: number; lng: number }; at: string }),
      eta: (d) => setEta((d as { etaSeconds: number }).etaSeconds),
    },
    false,
  );
  const points = useMemo<MapPoint[]>(() => {
    if (!data) return [];
    const out: MapPoint[] = [
      { id: 'pickup', ...data.pickup.location, label: t('tracking.mapPickup'), kind: 'pickup' },
      { id: 'dropoff', ...data.dropoff.location, label: t('tracking.mapDropoff'), kind: 'dropoff' },
    ];
    const d = data.driver && !FINAL.includes(data.status) ? (driverAt?.location ?? data.driver.location) : undefined;
    if (d) out.push({ id: 'driver', ...d, label: t('tracking.mapDriver'), kind: 'driver' });
    return out;
  }, [data, driverAt, t]);
  const etaSeconds = eta ?? data?.etaSeconds ?? null;
  const zone = data?.timeZone ?? undefined;
  const at = (iso: string) => i18n.dateTime(iso, { ...DAY, ...CLOCK }, zone);

  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
    document.title = `${t('tracking.title')} · ${t('tracking.brand')}`;
  }, [t]);

  return (
    <>
      <header className="topbar">
        <span className="brand">{t('tracking.brand')}</span>
      </header>
      <main id="main">
        <div className="page-head">
          <h1 ref={heading} tabIndex={-1}>
            {t('tracking.title')}
          </h1>
          {data && <StatusName status={data.status} />}
          {data && !FINAL.includes(data.status) && <Live state={live} />}
        </div>
        {tracking.error instanceof ApiError && tracking.error.status === 404 ? (
          <p role="alert" className="error">
            {t('tracking.unknownLink')}
          </p>
        ) : tracking.error ? (
          <p className="error" role="alert">
            {i18n.errorText(tracking.error)}
          </p>
        ) : !data ? (
          <p role="status">{t('common.loading')}</p>
        ) : (
          <div className="columns">
            <div>
              {etaSeconds !== null && !FINAL.includes(data.status) && (
                <p className="eta" data-testid="eta">
                  {t(data.status === 'ASSIGNED' ? 'tracking.etaPickup' : 'tracking.etaDropoff', {
                    minutes: Math.max(1, Math.round(etaSeconds / 60)),
                  })}
                </p>
              )}
              {(data.pickupWindow || data.dropoffWindow || data.scheduledAt) && (
                <section aria-labelledby="promised-heading" data-testid="promised">
                  <h2 id="promised-heading">{t('tracking.promised')}</h2>
                  {data.pickupWindow && (
                    <p>{t('tracking.pickupWindow', { window: windowText(i18n, data.pickupWindow, data.timeZone) })}</p>
                  )}
                  {data.dropoffWindow && (
                    <p>
                      {t('tracking.dropoffWindow', { window: windowText(i18n, data.dropoffWindow, data.timeZone) })}
                    </p>
                  )}
                  {data.scheduledAt && (
                    <p>
                      {t('tracking.pickupAt', {
                        time: windowText(i18n, { start: data.scheduledAt, end: data.scheduledAt }, data.timeZone),
                      })}
                    </p>
                  )}
                </section>
              )}
              <section aria-labelledby="driver-heading">
                <h2 id="driver-heading">{t('tracking.driver')}</h2>
                {data.driver ? (
                  <p>
                    {t('tracking.driverLine', {
                      name: data.driver.firstName,
                      vehicle: t(`vehicle.${data.driver.vehicleType}` as MessageKey),
                      plate: data.driver.vehiclePlate,
                    })}
                    {driverAt && !FINAL.includes(data.status) && (
                      <>
                        <br />
                        <span data-testid="position">
                          {i18n.rich('tracking.positionAt', {
                            time: at(driverAt.at),
                            at: (chunks) => <time dateTime={driverAt.at}>{chunks}</time>,
                          })}
                        </span>
                      </>
                    )}
                  </p>
                ) : (
                  <p>{t('tracking.noDriver')}</p>
                )}
              </section>
              <section aria-labelledby="timeline-heading">
                <h2 id="timeline-heading">{t('tracking.timeline')}</h2>
                <ol className="timeline">
                  {data.statusHistory.map((h, i) => (
                    <li key={i}>
                      <StatusName status={h.status} /> <time dateTime={h.at}>{at(h.at)}</time>
                    </li>
                  ))}
                </ol>
              </section>
            </div>
            <Map points={points} label={t('tracking.map')} loadingLabel={t('common.loadingMap')} />
          </div>
        )}
      </main>
    </>
  );
}
