// Webhook endpoints: add (the secret shown once), edit, enable/disable, delete, rotate the secret,
// send a test event, the delivery log with retry.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useRef, useState } from 'react';
import { api, ok } from '../../shared/api/client';
import { queryKeys } from '../../shared/query-keys';
import {
  BusyButton,
  ErrorBox,
  Field,
  Notice,
  PageTitle,
  StatusBadge,
  formatTime,
  useFocusAfterRender,
} from '../../shared/ui';
import { Link, navigate } from '../router';

const EVENTS = [
  'delivery.assigned',
  'delivery.picked_up',
  'delivery.in_transit',
  'delivery.delivered',
  'delivery.failed',
  'delivery.cancelled',
] as const;
type EventName = (typeof EVENTS)[number];

/**
 * The new secret, shown once. It appears above the control that made it, so its field takes the
 * focus (selected, ready to copy) and says what it is for; Tab goes on to Copy and "I have saved it".
 */
function SecretOnce({ secret, onDone }: { secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const help = useId();
  return (
    <section className="secret-box" aria-labelledby="secret-heading">
      <h2 id="secret-heading">Signing secret</h2>
      <p id={help}>Copy it now: it is shown only this once. Your receiver checks each request's signature with it.</p>
      <div className="row">
        <Field
          label="Secret"
          readOnly
          value={secret}
          className="secret"
          autoFocus
          aria-describedby={help}
          onFocus={(e) => e.target.select()}
        />
        <button
          type="button"
          className="secondary"
          onClick={() =>
            void navigator.clipboard?.writeText(secret).then(
              () => setCopied(true),
              () => setCopied(false),
            )
          }
        >
          Copy secret
        </button>
        {copied && <span role="status">Copied</span>}
      </div>
      <button type="button" onClick={onDone}>
        I have saved it
      </button>
    </section>
  );
}

function EventChoice({ value, onChange }: { value: EventName[]; onChange: (v: EventName[]) => void }) {
  return (
    <fieldset>
      <legend>Events</legend>
      {EVENTS.map((e) => (
        <label key={e} className="inline">
          <input
            type="checkbox"
            checked={value.includes(e)}
            onChange={(ev) => onChange(ev.target.checked ? [...value, e] : value.filter((x) => x !== e))}
          />{' '}
          {e}
        </label>
      ))}
    </fieldset>
  );
}

export function WebhooksPage() {
  const client = useQueryClient();
  const list = useQuery({ queryKey: queryKeys.webhooks, queryFn: () => ok(api.GET('/api/webhooks')) });
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<EventName[]>([...EVENTS]);
  const [secret, setSecret] = useState<{ id: string; secret: string }>();
  const add = useMutation({
    mutationFn: () => ok(api.POST('/api/webhooks', { body: { url, events, ...(description ? { description } : {}) } })),
    onSuccess: (created) => {
      setSecret({ id: created.id, secret: created.secret });
      setUrl('');
      setDescription('');
      void client.invalidateQueries({ queryKey: queryKeys.webhooks });
    },
  });
  const items = list.data?.items;
  return (
    <>
      <PageTitle>Webhooks</PageTitle>
      {secret && <SecretOnce secret={secret.secret} onDone={() => navigate(`/webhooks/${secret.id}`)} />}
      <section aria-labelledby="endpoints-heading">
        <h2 id="endpoints-heading">Endpoints</h2>
        <ErrorBox error={list.error} />
        {items?.length === 0 && <p>No endpoints yet.</p>}
        {items && items.length > 0 && (
          <table>
            <caption className="sr-only">Webhook endpoints</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">State</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {items.map((w) => (
                <tr key={w.id}>
                  <td>
                    <Link to={`/webhooks/${w.id}`}>{w.url}</Link>
                    {w.description ? <div className="hint">{w.description}</div> : null}
                  </td>
                  <td>{w.events.length === EVENTS.length ? 'all delivery events' : w.events.join(', ')}</td>
                  <td>{w.enabled ? 'enabled' : `disabled${w.disabledReason ? ` (${w.disabledReason})` : ''}`}</td>
                  <td>{formatTime(w.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="add-heading">
        <h2 id="add-heading">Add an endpoint</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            add.mutate();
          }}
        >
          <Field
            label="Endpoint URL"
            type="url"
            required
            maxLength={2048}
            placeholder="https://example.com/webhooks"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
          />
          <Field
            label="Description"
            maxLength={500}
            value={description}
            onChange={(e) => setDescription(e.target.value)}
          />
          <EventChoice value={events} onChange={setEvents} />
          <ErrorBox error={add.error} />
          <BusyButton type="submit" busy={add.isPending} disabled={events.length === 0}>
            Add endpoint
          </BusyButton>
        </form>
      </section>
    </>
  );
}

export function WebhookPage({ id }: { id: string }) {
  const client = useQueryClient();
  const params = { path: { id } };
  const endpoint = useQuery({
    queryKey: queryKeys.webhook(id),
    queryFn: () => ok(api.GET('/api/webhooks/{id}', { params })),
  });
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const log = useQuery({
    queryKey: queryKeys.webhookLogPage(id, cursor),
    queryFn: () =>
      ok(
        api.GET('/api/webhooks/{id}/deliveries', {
          params: { path: { id }, query: { limit: 20, ...(cursor ? { cursor } : {}) } },
        }),
      ),
  });
  const [edit, setEdit] = useState<{ url: string; description: string; events: EventName[] }>();
  const [secret, setSecret] = useState<string>();
  const [confirmDelete, setConfirmDelete] = useState(false);
  // The controls below replace one another (Edit and its form, Delete and its confirmation, the
  // secret box): the focus goes to what stands in place of the one that went.
  const focusAfterRender = useFocusAfterRender();
  const editButton = useRef<HTMLButtonElement>(null);
  const rotateButton = useRef<HTMLButtonElement>(null);
  const deleteButton = useRef<HTMLButtonElement>(null);
  const refreshLog = () => client.invalidateQueries({ queryKey: queryKeys.webhookLog(id) });

  const save = useMutation({
    mutationFn: (body: { url?: string; description?: string | null; events?: EventName[]; enabled?: boolean }) =>
      ok(api.PATCH('/api/webhooks/{id}', { params, body })),
    onSuccess: (w) => {
      client.setQueryData(['webhook', id], w);
      void client.invalidateQueries({ queryKey: queryKeys.webhooks });
      if (edit) focusAfterRender(() => editButton.current);
      setEdit(undefined);
    },
  });
  const rotate = useMutation({
    mutationFn: () => ok(api.POST('/api/webhooks/{id}/rotate-secret', { params })),
    onSuccess: (r) => setSecret(r.secret),
  });
  const test = useMutation({
    mutationFn: () => ok(api.POST('/api/webhooks/{id}/test', { params })),
    onSuccess: () => void refreshLog(),
  });
  const retry = useMutation({
    mutationFn: (deliveryId: string) =>
      ok(api.POST('/api/webhooks/deliveries/{id}/retry', { params: { path: { id: deliveryId } } })),
    onSuccess: () => void refreshLog(),
  });
  const remove = useMutation({
    mutationFn: () => ok(api.DELETE('/api/webhooks/{id}', { params })),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: queryKeys.webhooks });
      navigate('/webhooks');
    },
  });

  const w = endpoint.data;
  if (endpoint.error) {
    return (
      <>
        <PageTitle>Webhook endpoint</PageTitle>
        <ErrorBox error={endpoint.error} />
      </>
    );
  }
  if (!w) return <p role="status">Loading…</p>;
  return (
    <>
      <PageTitle>Webhook endpoint</PageTitle>
      <p>
        <Link to="/webhooks">All endpoints</Link>
      </p>
      {secret && (
        <SecretOnce
          secret={secret}
          onDone={() => {
            setSecret(undefined);
            focusAfterRender(() => rotateButton.current);
          }}
        />
      )}
      <section aria-labelledby="settings-heading">
        <h2 id="settings-heading">Settings</h2>
        {!edit ? (
          <>
            <dl className="details">
              <dt>URL</dt>
              <dd>{w.url}</dd>
              <dt>Description</dt>
              <dd>{w.description ?? '—'}</dd>
              <dt>Events</dt>
              <dd>{w.events.join(', ')}</dd>
              <dt>State</dt>
              <dd>{w.enabled ? 'Enabled' : `Disabled${w.disabledReason ? ` (${w.disabledReason})` : ''}`}</dd>
            </dl>
            <div className="actions">
              <button
                ref={editButton}
                type="button"
                className="secondary"
                onClick={() =>
                  setEdit({ url: w.url, description: w.description ?? '', events: w.events as EventName[] })
                }
              >
                Edit endpoint
              </button>
              <button type="button" className="secondary" onClick={() => save.mutate({ enabled: !w.enabled })}>
                {w.enabled ? 'Disable endpoint' : 'Enable endpoint'}
              </button>
              <BusyButton
                ref={rotateButton}
                type="button"
                className="secondary"
                onClick={() => rotate.mutate()}
                busy={rotate.isPending}
              >
                Rotate secret
              </BusyButton>
              <BusyButton type="button" onClick={() => test.mutate()} busy={test.isPending}>
                Send test event
              </BusyButton>
              {!confirmDelete ? (
                <button ref={deleteButton} type="button" className="danger" onClick={() => setConfirmDelete(true)}>
                  Delete endpoint
                </button>
              ) : (
                <>
                  <button type="button" className="danger" onClick={() => remove.mutate()}>
                    Confirm delete
                  </button>
                  {/* The safe choice has the focus: Enter twice does not delete. */}
                  <button
                    type="button"
                    className="secondary"
                    autoFocus
                    onClick={() => {
                      setConfirmDelete(false);
                      focusAfterRender(() => deleteButton.current);
                    }}
                  >
                    Keep endpoint
                  </button>
                </>
              )}
            </div>
            {test.isSuccess && <Notice>Test event queued.</Notice>}
          </>
        ) : (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              save.mutate({ url: edit.url, description: edit.description || null, events: edit.events });
            }}
          >
            <Field
              label="Endpoint URL"
              type="url"
              required
              maxLength={2048}
              autoFocus
              value={edit.url}
              onChange={(e) => setEdit({ ...edit, url: e.target.value })}
            />
            <Field
              label="Description"
              maxLength={500}
              value={edit.description}
              onChange={(e) => setEdit({ ...edit, description: e.target.value })}
            />
            <EventChoice value={edit.events} onChange={(events) => setEdit({ ...edit, events })} />
            <div className="actions">
              <BusyButton type="submit" busy={save.isPending}>
                Save endpoint
              </BusyButton>
              <button
                type="button"
                className="secondary"
                onClick={() => {
                  setEdit(undefined);
                  focusAfterRender(() => editButton.current);
                }}
              >
                Discard changes
              </button>
            </div>
          </form>
        )}
        <ErrorBox error={save.error ?? rotate.error ?? test.error ?? remove.error} />
      </section>
      <section aria-labelledby="log-heading">
        <div className="page-head">
          <h2 id="log-heading">Delivery log</h2>
          <button type="button" className="secondary" onClick={() => void refreshLog()}>
            Refresh log
          </button>
        </div>
        <ErrorBox error={log.error ?? retry.error} />
        {log.data?.items.length === 0 && <p>Nothing sent yet.</p>}
        {log.data && log.data.items.length > 0 && (
          <table>
            <caption className="sr-only">Deliveries to this endpoint, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Delivery</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Response</th>
                <th scope="col">Next attempt</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {log.data.items.map((d) => (
                <tr key={d.id}>
                  <td>{d.event}</td>
                  <td className="mono">{d.deliveryId.slice(0, 8)}</td>
                  <td>
                    <StatusBadge status={d.status} />
                  </td>
                  <td>{d.attempts}</td>
                  <td>
                    {d.lastResponseStatus ?? '—'}
                    {d.lastError ? <div className="hint">{d.lastError}</div> : null}
                  </td>
                  <td>{formatTime(d.nextAttemptAt)}</td>
                  <td>{formatTime(d.createdAt)}</td>
                  <td>
                    {d.status !== 'PENDING' && (
                      <button
                        type="button"
                        className="secondary"
                        onClick={() => retry.mutate(d.id)}
                        aria-label={`Retry ${d.event} of ${formatTime(d.createdAt)}`}
                      >
                        Retry
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <nav aria-label="Log pages" className="actions">
          {cursors.length > 0 && (
            <button type="button" className="secondary" onClick={() => setCursors([])}>
              First page
            </button>
          )}
          {log.data?.nextCursor && (
            <button type="button" className="secondary" onClick={() => setCursors([...cursors, log.data!.nextCursor!])}>
              Next page
            </button>
          )}
        </nav>
      </section>
    </>
  );
}
