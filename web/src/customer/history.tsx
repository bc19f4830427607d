// Past rides and packages: status, when, the price, the fare, a cancellation fee and the tip.
import { useQuery } from '@tanstack/react-query';
import { Fragment, type ReactNode } from 'react';
import { api, ok } from '../shared/api/client';
import { customerKeys } from '../shared/query-keys';
import { ErrorBox, Money, StatusBadge, formatTime } from '../shared/ui';
import { vehicleName, type JobExtras, type Money as Amount } from './types';
import { Title } from './ui';

interface Row extends JobExtras {
  id: string;
  kind: 'Ride' | 'Package';
  status: string;
  vehicleType: string;
  createdAt: string;
  price?: Amount | null;
  fare?: Amount | null;
  cancellationFee?: Amount | null;
  label?: string;
}

/** `account`: what the screen shows under its title, before the list (the notifications switch). */
export function History({
  onRide,
  onPackage,
  account,
}: {
  onRide: (id: string) => void;
  onPackage: (id: string) => void;
  account?: ReactNode;
}) {
  // Read again each time the screen opens: a ride may have ended meanwhile.
  const rides = useQuery({
    queryKey: customerKeys.rideHistory,
    staleTime: 0,
    queryFn: () => ok(api.GET('/api/rides', { params: { query: { limit: 50 } } })),
  });
  const packages = useQuery({
    queryKey: customerKeys.packageHistory,
    staleTime: 0,
    queryFn: () => ok(api.GET('/api/packages', { params: { query: { limit: 50 } } })),
  });
  const rows: Row[] = [
    ...(rides.data?.items ?? []).map((r) => ({ ...(r as Omit<Row, 'kind'>), kind: 'Ride' as const })),
    ...(packages.data?.items ?? []).map((p) => ({
      ...(p as unknown as Omit<Row, 'kind'>),
      kind: 'Package' as const,
      label: p.parcel.description,
    })),
  ].sort((a, b) => b.createdAt.localeCompare(a.createdAt));

  return (
    <>
      <Title>History</Title>
      {account}
      <ErrorBox error={rides.error ?? packages.error} />
      {rides.isPending || packages.isPending ? (
        <p role="status">Loading…</p>
      ) : (
        rows.length === 0 && <p>No rides or packages yet.</p>
      )}
      <ul className="past" aria-label="Past rides and packages">
        {rows.map((row) => (
          <li key={row.id} className="card">
            <p>
              <strong>{row.kind}</strong> {row.label ? `“${row.label}” ` : ''}
              <StatusBadge status={row.status} />
            </p>
            <p className="muted">
              {formatTime(row.createdAt)} · {vehicleName(row.vehicleType)}
            </p>
            <dl className="details">
              {(
                [
                  ['Price', row.price],
                  ['Fare', row.fare],
                  ['Cancellation fee', row.cancellationFee],
                  ['Tip', row.tip],
                ] as const
              )
                .filter(([label, money]) => label === 'Price' || money)
                .map(([label, money]) => (
                  <Fragment key={label}>
                    <dt>{label}</dt>
                    <dd>
                      <Money money={money} />
                    </dd>
                  </Fragment>
                ))}
            </dl>
            <button
              type="button"
              className="secondary big"
              onClick={() => (row.kind === 'Ride' ? onRide(row.id) : onPackage(row.id))}
            >
              Open {row.kind.toLowerCase()}
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}
