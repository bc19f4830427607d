// Ratings (contract section 20): an admin sees every rating with its comment and the drivers rated
// below the alert threshold; a company its drivers' ratings (stars only); a business the ratings it gave.
import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../shared/api/client';
import type { Schemas } from '../../shared/api/types';
import { queryKeys } from '../../shared/query-keys';
import { ErrorBox, Field, PageTitle, formatTime } from '../../shared/ui';
import { Link } from '../router';
import { Pager, useCursors } from '../pager';

type RatingPage = Schemas['/api/admin/ratings']['get']['responses'][200]['content']['application/json'];
type Rating = RatingPage['items'][number];
type Scope = 'admin' | 'company' | 'business';

const PATHS = {
  admin: '/api/admin/ratings',
  company: '/api/companies/me/ratings',
  business: '/api/businesses/me/ratings',
} as const;

function useRatings(scope: Scope, filter: { driverId?: string }, cursor: string | undefined) {
  return useQuery({
    queryKey: queryKeys.ratingsPage(scope, filter, cursor),
    queryFn: () => {
      const query = { limit: 20, ...(cursor ? { cursor } : {}) };
      if (scope === 'business') return ok(api.GET(PATHS.business, { params: { query } })) as Promise<RatingPage>;
      return ok(api.GET(PATHS[scope], { params: { query: { ...query, ...filter } } })) as Promise<RatingPage>;
    },
  });
}

const stars = (n: number) => `${n} ${n === 1 ? 'star' : 'stars'}`;
const who = (r: Rating) =>
  r.side === 'CREATOR' ? `${r.raterRole.toLowerCase()} → driver` : `driver → ${r.ratedRole.toLowerCase()}`;
const jobLink = (r: Rating) =>
  r.jobType === 'PACKAGE' ? (
    <Link to={`/deliveries/${r.jobId}`}>Delivery {r.jobId.slice(0, 8)}</Link>
  ) : (
    <span>Ride {r.jobId.slice(0, 8)}</span>
  );

/** One table of ratings; the comment column only where the API sends comments. */
function RatingsTable({ scope, label, driverId }: { scope: Scope; label: string; driverId?: string }) {
  const { cursors, setCursors } = useCursors();
  const ratings = useRatings(scope, driverId ? { driverId } : {}, cursors[cursors.length - 1]);
  const withComments = scope !== 'company';
  const items = ratings.data?.items ?? [];
  return (
    <>
      <ErrorBox error={ratings.error} />
      {ratings.isPending && <p role="status">Loading…</p>}
      {ratings.data && items.length === 0 && <p>No ratings yet.</p>}
      {items.length > 0 && (
        <table aria-label={label}>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Job</th>
              <th scope="col">Who rated whom</th>
              {scope !== 'business' && <th scope="col">Driver</th>}
              <th scope="col">Stars</th>
              {withComments && <th scope="col">Comment</th>}
            </tr>
          </thead>
          <tbody>
            {items.map((r) => (
              <tr key={r.id}>
                <td>{formatTime(r.createdAt)}</td>
                <td>{jobLink(r)}</td>
                <td>{who(r)}</td>
                {scope !== 'business' && <td className="mono">{r.driverId.slice(0, 8)}</td>}
                <td>{stars(r.stars)}</td>
                {withComments && <td>{r.comment ?? '—'}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager next={ratings.data?.nextCursor} cursors={cursors} setCursors={setCursors} />
    </>
  );
}

function Alerts() {
  const alerts = useQuery({
    queryKey: queryKeys.ratingAlerts,
    queryFn: () => ok(api.GET('/api/admin/ratings/alerts', {})),
  });
  const a = alerts.data;
  return (
    <>
      <h2 id="alerts-heading">Drivers below the threshold</h2>
      <ErrorBox error={alerts.error} />
      {alerts.isPending && <p role="status">Loading…</p>}
      {a && (
        <p className="hint">
          Rated below {a.threshold.toFixed(1)} on average, with at least {a.minimumRatings} ratings.
        </p>
      )}
      {a && a.items.length === 0 && <p>No driver is below the threshold.</p>}
      {a && a.items.length > 0 && (
        <table aria-labelledby="alerts-heading">
          <thead>
            <tr>
              <th scope="col">Driver</th>
              <th scope="col">Rating</th>
              <th scope="col">Ratings</th>
            </tr>
          </thead>
          <tbody>
            {a.items.map((d) => (
              <tr key={d.driverId}>
                <td>
                  {d.firstName} {d.lastName}
                </td>
                <td>{d.rating.toFixed(1)}</td>
                <td>{d.ratingCount}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function DriverFilter({ onChange }: { onChange: (driverId: string | undefined) => void }) {
  const [value, setValue] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onChange(value.trim() === '' ? undefined : value.trim());
  };
  return (
    <form className="toolbar" onSubmit={submit} aria-label="Filter">
      <Field
        label="Driver id"
        value={value}
        pattern={UUID.source}
        title="A driver's id (a UUID)"
        onChange={(e) => setValue(e.target.value)}
      />
      <button type="submit" className="field-button">
        Filter
      </button>
    </form>
  );
}

export function AdminRatingsPage() {
  const [driverId, setDriverId] = useState<string | undefined>();
  return (
    <>
      <PageTitle>Ratings</PageTitle>
      <Alerts />
      <h2>Every rating</h2>
      <DriverFilter onChange={setDriverId} />
      <RatingsTable key={driverId ?? 'all'} scope="admin" label="Ratings" driverId={driverId} />
    </>
  );
}

export function CompanyRatingsPage() {
  return (
    <>
      <PageTitle>Ratings</PageTitle>
      <p className="hint">The stars your drivers received. Comments are seen by their authors and admins only.</p>
      <RatingsTable scope="company" label="Ratings of your drivers" />
    </>
  );
}

export function BusinessRatingsPage() {
  return (
    <>
      <PageTitle>Ratings</PageTitle>
      <p className="hint">The ratings you gave the drivers of your deliveries.</p>
      <RatingsTable scope="business" label="Ratings you gave" />
    </>
  );
}
