// A delivery's page: price, status timeline, the driver (live position and ETA from the track
// stream), the proof of delivery, the tracking link, cancelling.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, ok } from '../api/client';
import { session } from '../api/session';
import { Map, type MapPoint } from '../map';
import { ProofImages } from '../proof';
import { queryKeys } from '../query-keys';
import { RateAndTip } from '../rate';
import { LiveBadge, useStream } from '../streams';
import { BusyButton, ErrorBox, Field, FocusNotice, Money, PageTitle, StatusBadge, Timeline, formatTime } from '../ui';
import { applyStatusEvent, type StatusEvent } from './stream';

export function DeliveryPage({ id }: { id: string }) {
  const client = useQueryClient();
  const role = session.user?.role;
  const pkg = useQuery({
    queryKey: queryKeys.package(id),
    queryFn: () => ok(api.GET('/api/packages/{id}', { params: { path: { id } } })),
  });
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
    resync: () => void client.invalidateQueries({ queryKey: queryKeys.package(id) }),
  });
  const [reason, setReason] = useState('');
  const cancel = useMutation({
    mutationFn: () =>
      ok(api.POST('/api/packages/{id}/cancel', { params: { path: { id } }, body: reason ? { reason } : {} })),
    onSuccess: (p) => {
      client.setQueryData(queryKeys.package(id), p);
      void client.invalidateQueries({ queryKey: queryKeys.packages });
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
    if (d)
      out.push({ id: 'driver', lat: d.lat, lng: d.lng, label: `Driver ${p.driver?.firstName ?? ''}`, kind: 'driver' });
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
  const canCancel =
    (p.status === 'PENDING' || p.status === 'ASSIGNED') &&
    (role === 'ADMIN' || role === 'BUSINESS' || role === 'CUSTOMER');

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
            <Timeline history={p.statusHistory} />
          </section>
          <section aria-labelledby="driver-heading">
            <h2 id="driver-heading">Driver</h2>
            {p.driver ? (
              <p>
                {p.driver.firstName}, {p.driver.vehicleType} {p.driver.vehiclePlate},{' '}
                <a href={`tel:${p.driver.phone}`}>{p.driver.phone}</a>
                {eta && !final && (
                  <>
                    <br />
                    <span data-testid="eta">
                      About {Math.max(1, Math.round(eta.etaSeconds / 60))} min to{' '}
                      {eta.to === 'PICKUP' ? 'the pickup' : 'the drop-off'}
                    </span>
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
          {(p.proof || p.proofRequired.length > 0) && (
            <section aria-labelledby="proof-heading">
              <h2 id="proof-heading">Proof of delivery</h2>
              {p.proofRequired.length > 0 && (
                <p className="muted">
                  Required: {p.proofRequired.map((kind) => (kind === 'PHOTO' ? 'photo' : 'signature')).join(' and ')}
                </p>
              )}
              {p.proof ? <ProofImages proof={p.proof} /> : <p>No proof sent yet.</p>}
            </section>
          )}
          {/* A company never gets the link (contract section 9): it follows the job on this page. */}
          {trackingUrl !== undefined && (
            <section aria-labelledby="tracking-heading">
              <h2 id="tracking-heading">Tracking link</h2>
              <div className="row">
                <Field label="Tracking link" readOnly value={trackingUrl} />
                <button
                  type="button"
                  className="secondary"
                  onClick={() =>
                    void navigator.clipboard?.writeText(trackingUrl).then(
                      () => setCopied(true),
                      () => setCopied(false),
                    )
                  }
                >
                  Copy link
                </button>
                {copied && <span role="status">Copied</span>}
              </div>
            </section>
          )}
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
                  <Field
                    label="Reason for cancelling"
                    maxLength={500}
                    value={reason}
                    onChange={(e) => setReason(e.target.value)}
                  />
                  {p.cancellationFeeNow !== undefined && (
                    <p data-testid="cancel-fee">
                      {p.cancellationFeeNow ? (
                        <>
                          Cancelling now costs <Money money={p.cancellationFeeNow} />.
                        </>
                      ) : (
                        'Cancelling now is free.'
                      )}
                    </p>
                  )}
                  <ErrorBox error={cancel.error} />
                  <BusyButton type="submit" className="danger" busy={cancel.isPending}>
                    Cancel delivery
                  </BusyButton>
                </form>
              )}
            </section>
          )}
        </div>
        {p.status === 'DELIVERED' && (role === 'BUSINESS' || role === 'CUSTOMER') && (
          <RateAndTip
            kind="packages"
            id={p.id}
            price={p.price}
            tip={p.tip}
            onChanged={() => void client.invalidateQueries({ queryKey: queryKeys.package(id) })}
          />
        )}
        <Map points={points} label="Map of the pickup, the drop-off and the driver" />
      </div>
    </>
  );
}
