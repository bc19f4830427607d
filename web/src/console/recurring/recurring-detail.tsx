// One recurring job: its next occurrences with pause, resume, skip and delete.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../../shared/api/client';
import { BusyButton, ErrorBox, Field, Notice, PageTitle, StatusBadge, formatTime } from '../../shared/ui';
import { Link, navigate } from '../router';
import { describeRule, keys, type Occurrence } from './recurring-shared';

/** A local date-time of the job's zone as written in it ("2027-01-04 18:00"). */
const local = (date: string) => date.slice(0, 16).replace('T', ' ');

/** An instant as the job's zone shows it. */
function inZone(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
  }).format(new Date(iso));
}

export function RecurringJobPage({ id }: { id: string }) {
  const client = useQueryClient();
  const params = { path: { id } };
  const job = useQuery({ queryKey: keys.one(id), queryFn: () => ok(api.GET('/api/recurring-jobs/{id}', { params })) });
  const [until, setUntil] = useState('');
  const [notice, setNotice] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  const refresh = (message: string) => {
    setNotice(message);
    void client.invalidateQueries({ queryKey: keys.list });
    return client.invalidateQueries({ queryKey: keys.one(id) });
  };
  const pause = useMutation({
    mutationFn: () =>
      ok(
        api.POST('/api/recurring-jobs/{id}/pause', {
          params,
          body: until ? { until: new Date(until).toISOString() } : {},
        }),
      ),
    onSuccess: (paused) => refresh(`Paused: ${paused.cancelled} pending occurrence(s) cancelled.`),
  });
  const resume = useMutation({
    mutationFn: () => ok(api.POST('/api/recurring-jobs/{id}/resume', { params })),
    onSuccess: () => refresh('Resumed.'),
  });
  const skip = useMutation({
    mutationFn: (date: string) =>
      ok(api.DELETE('/api/recurring-jobs/{id}/occurrences/{date}', { params: { path: { id, date } } })),
    onSuccess: (result) => refresh(`Skipped ${result.skipped.map((o) => local(o.date)).join(', ')}.`),
  });
  const remove = useMutation({
    mutationFn: () => ok(api.DELETE('/api/recurring-jobs/{id}', { params })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: keys.list });
      navigate('/recurring');
    },
  });
  const data = job.data;
  return (
    <>
      <PageTitle>Recurring job</PageTitle>
      <p>
        <Link to="/recurring">All recurring jobs</Link>
      </p>
      <ErrorBox error={job.error} />
      {data && (
        <>
          <dl className="facts">
            <dt>Repeats</dt>
            <dd>{describeRule(data.rule)}</dd>
            <dt>Rule</dt>
            <dd>
              <code>{data.rule.replace('\n', ' ')}</code>
            </dd>
            <dt>Time zone</dt>
            <dd>{data.timeZone}</dd>
            <dt>State</dt>
            <dd>
              <StatusBadge status={data.state} />
              {data.state === 'PAUSED' &&
                (data.pausedUntil ? ` until ${formatTime(data.pausedUntil)}` : ' until resumed')}
            </dd>
            <dt>Pickup</dt>
            <dd>{data.template.pickup.address}</dd>
            <dt>Drop-off</dt>
            <dd>{data.template.dropoff.address}</dd>
          </dl>
          {notice && <Notice>{notice}</Notice>}
          <section aria-labelledby="next-heading">
            <h2 id="next-heading">Next occurrences</h2>
            <ErrorBox error={skip.error} />
            <table>
              <caption className="sr-only">The next 10 occurrences, in {data.timeZone} time</caption>
              <thead>
                <tr>
                  <th scope="col">When ({data.timeZone})</th>
                  <th scope="col">Pickup window</th>
                  <th scope="col">Drop-off window</th>
                  <th scope="col">State</th>
                  <th scope="col">Delivery</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {(data.nextOccurrences ?? []).map((o: Occurrence) => (
                  <tr key={o.date}>
                    <td>{local(o.date)}</td>
                    <td>
                      {o.pickupWindow
                        ? `${inZone(o.pickupWindow.start, data.timeZone)} – ${inZone(o.pickupWindow.end, data.timeZone)}`
                        : '—'}
                    </td>
                    <td>
                      {o.dropoffWindow
                        ? `${inZone(o.dropoffWindow.start, data.timeZone)} – ${inZone(o.dropoffWindow.end, data.timeZone)}`
                        : '—'}
                    </td>
                    <td>
                      <StatusBadge status={o.state} />
                      {o.error ? <div className="hint">{o.error}</div> : null}
                    </td>
                    <td>{o.packageId ? <Link to={`/deliveries/${o.packageId}`}>Open</Link> : '—'}</td>
                    <td>
                      {(o.state === 'UPCOMING' || o.state === 'CREATED') && (
                        <BusyButton
                          type="button"
                          className="secondary"
                          busy={skip.isPending}
                          aria-label={`Skip ${local(o.date)}`}
                          onClick={() => skip.mutate(o.date)}
                        >
                          Skip
                        </BusyButton>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
          <section aria-labelledby="pause-heading">
            <h2 id="pause-heading">{data.state === 'PAUSED' ? 'Resume' : 'Pause'}</h2>
            {data.state === 'PAUSED' ? (
              <>
                <ErrorBox error={resume.error} />
                <BusyButton type="button" busy={resume.isPending} onClick={() => resume.mutate()}>
                  Resume
                </BusyButton>
              </>
            ) : (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  pause.mutate();
                }}
              >
                <Field
                  label="Pause until (your time; empty: until resumed)"
                  type="datetime-local"
                  value={until}
                  onChange={(e) => setUntil(e.target.value)}
                />
                <ErrorBox error={pause.error} />
                <BusyButton type="submit" busy={pause.isPending}>
                  Pause
                </BusyButton>
              </form>
            )}
          </section>
          <section aria-labelledby="delete-heading">
            <h2 id="delete-heading">Delete</h2>
            <ErrorBox error={remove.error} />
            {confirmDelete ? (
              <>
                <p>Its pending deliveries still to come are cancelled.</p>
                <BusyButton type="button" busy={remove.isPending} onClick={() => remove.mutate()}>
                  Delete for good
                </BusyButton>{' '}
                <button type="button" className="secondary" onClick={() => setConfirmDelete(false)}>
                  Keep it
                </button>
              </>
            ) : (
              <button type="button" className="secondary" onClick={() => setConfirmDelete(true)}>
                Delete recurring job
              </button>
            )}
          </section>
        </>
      )}
    </>
  );
}
