// Deliveries: the list (filter, paging, live statuses); a company assigns its country's pending ones here.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../../shared/api/client';
import { session } from '../../shared/api/session';
import { queryKeys } from '../../shared/query-keys';
import { LiveBadge } from '../../shared/streams';
import {
  ErrorBox,
  FocusNotice,
  Money,
  PACKAGE_STATUSES,
  PageTitle,
  SelectField,
  StatusBadge,
  formatTime,
} from '../../shared/ui';
import { Link } from '../router';
import { AssignDriver } from './assign';
import { useAccountStream } from '../../shared/deliveries/stream';
import type { Package, PackageStatus } from '../../shared/deliveries/types';
import { Pager, useCursors } from '../pager';

export function DeliveriesPage() {
  const [status, setStatus] = useState<PackageStatus | ''>('');
  const { cursors, setCursors, cursor } = useCursors();
  const live = useAccountStream();
  const role = session.user?.role;
  const client = useQueryClient();
  // Deliveries this page assigned, with the driver's name (company).
  const [assigned, setAssigned] = useState<Record<string, string>>({});
  const list = useQuery({
    queryKey: queryKeys.packagesPage(status, cursor),
    queryFn: async () => {
      const page = await ok(
        api.GET('/api/packages', {
          params: { query: { limit: 20, ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) } },
        }),
      );
      // A cached delivery older than its row here is out of date (a driver named since, say).
      for (const p of page.items) {
        const cached = client.getQueryData<Package>(queryKeys.package(p.id));
        if (cached && cached.updatedAt < p.updatedAt)
          void client.invalidateQueries({ queryKey: queryKeys.package(p.id) });
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
      {list.data && list.data.items.length === 0 && (
        <p>No deliveries{status ? ` with status ${status.replace(/_/g, ' ')}` : ''} yet.</p>
      )}
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
                  {role === 'COMPANY' && p.status === 'PENDING' ? (
                    (p.reference ?? p.parcel.description)
                  ) : (
                    <Link to={`/deliveries/${p.id}`}>{p.reference ?? p.parcel.description}</Link>
                  )}
                </td>
                <td data-testid="status">
                  <StatusBadge status={p.status} />
                </td>
                <td>{p.pickup.address}</td>
                <td>{p.dropoff.address}</td>
                <td>{p.driver ? `${p.driver.firstName} (${p.driver.vehiclePlate})` : '—'}</td>
                <td data-testid="price">
                  <Money money={p.price} />
                  {p.cancellationFee && (
                    <>
                      {' '}
                      (cancellation fee <Money money={p.cancellationFee} />)
                    </>
                  )}
                </td>
                <td>{formatTime(p.createdAt)}</td>
                {role === 'COMPANY' && (
                  <td>
                    {p.status === 'PENDING' ? (
                      <AssignDriver
                        id={p.id}
                        name={p.reference ?? p.parcel.description}
                        onAssigned={(driver) => setAssigned((a) => ({ ...a, [p.id]: driver }))}
                      />
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
      <Pager next={list.data?.nextCursor} cursors={cursors} setCursors={setCursors} />
    </>
  );
}
