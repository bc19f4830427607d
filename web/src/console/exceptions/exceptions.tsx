// Exceptions (contract section 23): the lateness alerts the user may see, live over the account
// stream (`event: alert`), filtered by state, kind and day, each with its job's link, acknowledge and
// resolve. Admins see every alert, a company its drivers' jobs', a business its own packages'.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../../shared/api/client';
import { queryKeys } from '../../shared/query-keys';
import { LiveBadge, useStream } from '../../shared/streams';
import { BusyButton, ErrorBox, Field, PageTitle, SelectField, formatTime } from '../../shared/ui';
import { Pager, useCursors } from '../pager';
import { Link } from '../router';

type Alert = {
  id: string;
  kind: AlertKind;
  jobType: 'PACKAGE' | 'RIDE';
  jobId: string;
  driverId?: string;
  raisedAt: string;
  details: Record<string, unknown>;
  state: AlertState;
  by?: string;
  at?: string;
};
type AlertState = 'OPEN' | 'ACKNOWLEDGED' | 'RESOLVED';
type AlertKind = 'job.at_risk' | 'job.late' | 'offer.unanswered' | 'driver.not_at_pickup' | 'driver.stalled';

const KINDS: Record<AlertKind, string> = {
  'job.at_risk': 'At risk',
  'job.late': 'Late',
  'offer.unanswered': 'No driver accepted',
  'driver.not_at_pickup': 'Driver not at pickup',
  'driver.stalled': 'Driver stalled',
};
const STATES: AlertState[] = ['OPEN', 'ACKNOWLEDGED', 'RESOLVED'];

/** One line on what held when the alert was raised. */
function describe(alert: Alert): string {
  const d = alert.details;
  const at = (v: unknown) => (typeof v === 'string' ? formatTime(v) : '');
  switch (alert.kind) {
    case 'job.at_risk':
      return `${d.step === 'PICKUP' ? 'Pickup' : 'Drop-off'} due ${at(d.by)}, expected ${at(d.eta)}`;
    case 'job.late':
      return `${d.step === 'PICKUP' ? 'Pickup' : 'Drop-off'} was due ${at(d.by)}`;
    case 'offer.unanswered':
      return `Waiting since ${at(d.since)}, ${String(d.offers ?? 0)} offers`;
    case 'driver.not_at_pickup':
      return `Window started ${at(d.windowStart)}${typeof d.distanceMeters === 'number' ? `, driver ${d.distanceMeters} m away` : ''}`;
    case 'driver.stalled':
      return `Moved ${String(d.movedMeters)} m since ${at(d.since)}`;
  }
}

export function ExceptionsPage() {
  const client = useQueryClient();
  const [state, setState] = useState<AlertState | ''>('');
  const [kind, setKind] = useState<AlertKind | ''>('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const { cursors, setCursors, cursor } = useCursors();
  const filter = { state, kind, from, to };
  const refresh = () => void client.invalidateQueries({ queryKey: queryKeys.alerts });
  // A raised or changed alert, or a reconnection: the list is read again (it is one small page).
  const live = useStream('/api/events/stream', { alert: refresh, resync: refresh });
  const list = useQuery({
    queryKey: queryKeys.alertsPage(filter, cursor),
    queryFn: () =>
      ok(
        api.GET('/api/alerts', {
          params: {
            query: {
              limit: 20,
              ...(state ? { state } : {}),
              ...(kind ? { kind } : {}),
              ...(from ? { from } : {}),
              // The day chosen is included: raised before the next midnight (UTC).
              ...(to ? { to: new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString() } : {}),
              ...(cursor ? { cursor } : {}),
            },
          },
        }),
      ) as Promise<{ items: Alert[]; nextCursor: string | null }>,
  });
  const change = useMutation({
    mutationFn: ({ id, action }: { id: string; action: 'acknowledge' | 'resolve' }) =>
      ok(
        action === 'acknowledge'
          ? api.POST('/api/alerts/{id}/acknowledge', { params: { path: { id } } })
          : api.POST('/api/alerts/{id}/resolve', { params: { path: { id } } }),
      ),
    onSettled: refresh,
  });
  const filtered = (set: (v: string) => void) => (value: string) => {
    set(value);
    setCursors([]);
  };
  return (
    <>
      <div className="page-head">
        <PageTitle>Exceptions</PageTitle>
        <LiveBadge state={live} />
      </div>
      <div className="toolbar">
        <SelectField
          label="State"
          value={state}
          onChange={(e) => filtered((v) => setState(v as AlertState | ''))(e.target.value)}
        >
          <option value="">All</option>
          {STATES.map((s) => (
            <option key={s} value={s}>
              {s.toLowerCase()}
            </option>
          ))}
        </SelectField>
        <SelectField
          label="Kind"
          value={kind}
          onChange={(e) => filtered((v) => setKind(v as AlertKind | ''))(e.target.value)}
        >
          <option value="">All</option>
          {Object.entries(KINDS).map(([k, label]) => (
            <option key={k} value={k}>
              {label}
            </option>
          ))}
        </SelectField>
        <Field label="From" type="date" value={from} onChange={(e) => filtered(setFrom)(e.target.value)} />
        <Field label="To" type="date" value={to} onChange={(e) => filtered(setTo)(e.target.value)} />
      </div>
      <ErrorBox error={list.error ?? change.error} />
      {list.data && list.data.items.length === 0 && <p>No exceptions match.</p>}
      {list.data && list.data.items.length > 0 && (
        <table>
          <caption className="sr-only">Exceptions, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Raised</th>
              <th scope="col">Alert</th>
              <th scope="col">Job</th>
              <th scope="col">What happened</th>
              <th scope="col">State</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((a) => {
              const name = `${KINDS[a.kind]} · ${a.jobType === 'PACKAGE' ? 'delivery' : 'ride'} ${a.jobId.slice(0, 8)}`;
              const busy = change.isPending && change.variables?.id === a.id;
              return (
                <tr key={a.id} data-testid="alert">
                  <td>{formatTime(a.raisedAt)}</td>
                  <td>{KINDS[a.kind]}</td>
                  <td>
                    {a.jobType === 'PACKAGE' ? (
                      <Link to={`/deliveries/${a.jobId}`}>Delivery {a.jobId.slice(0, 8)}</Link>
                    ) : (
                      `Ride ${a.jobId.slice(0, 8)}`
                    )}
                  </td>
                  <td>{describe(a)}</td>
                  <td data-testid="alert-state">{a.state.toLowerCase()}</td>
                  <td className="actions">
                    {a.state === 'OPEN' && (
                      <BusyButton
                        type="button"
                        className="secondary"
                        busy={busy}
                        aria-label={`Acknowledge ${name}`}
                        onClick={() => change.mutate({ id: a.id, action: 'acknowledge' })}
                      >
                        Acknowledge
                      </BusyButton>
                    )}
                    {a.state !== 'RESOLVED' && (
                      <BusyButton
                        type="button"
                        busy={busy}
                        aria-label={`Resolve ${name}`}
                        onClick={() => change.mutate({ id: a.id, action: 'resolve' })}
                      >
                        Resolve
                      </BusyButton>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <Pager next={list.data?.nextCursor} cursors={cursors} setCursors={setCursors} />
    </>
  );
}
