// Company: its drivers with availability and position (a map), and the pending deliveries of its
// country that it can assign to them (from a delivery's page).
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { api, ok } from '../../shared/api/client';
import { useLiveDrivers } from '../../shared/live-drivers';
import { Map, type MapPoint } from '../../shared/map';
import { queryKeys } from '../../shared/query-keys';
import { LiveBadge } from '../../shared/streams';
import { ErrorBox, PageTitle, StatusBadge, formatTime } from '../../shared/ui';

export function CompanyDriversPage() {
  const drivers = useQuery({
    queryKey: queryKeys.companyDrivers,
    queryFn: () => ok(api.GET('/api/companies/me/drivers', { params: { query: { limit: 100 } } })),
  });
  const live = useLiveDrivers('/api/companies/me/drivers/live/stream');
  const listed = useMemo<MapPoint[]>(
    () =>
      (drivers.data?.items ?? [])
        .filter((d) => d.location)
        .map((d) => ({
          id: d.id,
          lat: d.location!.lat,
          lng: d.location!.lng,
          label: `${d.firstName} ${d.lastName} · ${d.vehicleType}`,
          kind: d.availability === 'ONLINE' ? 'driver' : 'driver-offline',
        })),
    [drivers.data],
  );
  // The stream, once it answers, is fresher than the list.
  const points = live.state === 'live' ? live.points : listed;
  return (
    <>
      <div className="page-head">
        <PageTitle>Drivers</PageTitle>
        <LiveBadge state={live.state} />
      </div>
      <ErrorBox error={drivers.error} />
      <div className="columns">
        <div>
          {drivers.data?.items.length === 0 && <p>No drivers have joined your company yet.</p>}
          {drivers.data && drivers.data.items.length > 0 && (
            <table>
              <caption className="sr-only">The company's drivers</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Vehicle</th>
                  <th scope="col">Availability</th>
                  <th scope="col">Last position</th>
                </tr>
              </thead>
              <tbody>
                {drivers.data.items.map((d) => (
                  <tr key={d.id}>
                    <td>
                      {d.firstName} {d.lastName}
                    </td>
                    <td>
                      {d.vehicleType} {d.vehiclePlate}
                    </td>
                    <td>
                      <StatusBadge status={d.availability} />
                    </td>
                    <td>{d.location ? formatTime(d.location.updatedAt) : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <p>To give a driver a job, open a pending delivery under Deliveries and choose Assign.</p>
        </div>
        <Map points={points} cluster label="Map of the company's drivers" />
      </div>
    </>
  );
}
