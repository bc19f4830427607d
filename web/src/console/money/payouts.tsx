// Admin: payout batches (contract section 21): create one (an Idempotency-Key per click), the list,
// a batch's lines, its bulk-upload CSV, marking it paid and a line failed.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../shared/api/client';
import type { Schemas } from '../../shared/api/types';
import { queryKeys } from '../../shared/query-keys';
import {
  BusyButton,
  ErrorBox,
  Field,
  FocusNotice,
  PageTitle,
  StatusBadge,
  formatMoney,
  formatTime,
} from '../../shared/ui';
import { Link, navigate } from '../router';
import { saveBlob } from '../../shared/download';
import { newIdempotencyKey, toMinorUnits } from './money';
import { Pager, useCursors } from '../pager';

type Batch = Schemas['/api/admin/payouts/{id}']['get']['responses'][200]['content']['application/json'];

export function PayoutsPage() {
  const client = useQueryClient();
  const { cursors, setCursors, cursor } = useCursors();
  const [form, setForm] = useState({ currency: 'KES', minimum: '' });
  const [invalid, setInvalid] = useState<string | null>(null);
  const list = useQuery({
    queryKey: queryKeys.payoutsPage(cursor),
    queryFn: () =>
      ok(api.GET('/api/admin/payouts', { params: { query: { limit: 20, ...(cursor ? { cursor } : {}) } } })),
  });
  const create = useMutation({
    mutationFn: (body: { currency: string; minimum?: number }) =>
      ok(api.POST('/api/admin/payouts', { body, headers: { 'idempotency-key': newIdempotencyKey() } })),
    onSuccess: (batch) => {
      void client.invalidateQueries({ queryKey: queryKeys.payouts });
      void client.invalidateQueries({ queryKey: queryKeys.balances });
      client.setQueryData(queryKeys.payout(batch.id), batch);
      navigate(`/payouts/${batch.id}`);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const currency = form.currency.trim().toUpperCase();
    let minimum: number | undefined;
    if (form.minimum.trim()) {
      minimum = toMinorUnits(form.minimum, currency);
      if (minimum === undefined) return setInvalid(`Minimum must be a positive amount in ${currency}`);
    }
    setInvalid(null);
    create.mutate({ currency, ...(minimum ? { minimum } : {}) });
  };
  return (
    <>
      <PageTitle>Payouts</PageTitle>
      <section aria-labelledby="new-batch">
        <h2 id="new-batch">New payout batch</h2>
        <p className="hint">
          Every driver and business owed at least the minimum, outside an open batch, for its whole balance.
        </p>
        <form className="toolbar" onSubmit={submit} aria-labelledby="new-batch">
          <Field
            label="Currency"
            required
            maxLength={3}
            value={form.currency}
            onChange={(e) => setForm({ ...form, currency: e.target.value })}
          />
          <Field
            label="Minimum"
            inputMode="decimal"
            placeholder="Any"
            value={form.minimum}
            onChange={(e) => setForm({ ...form, minimum: e.target.value })}
          />
          <BusyButton type="submit" className="field-button" busy={create.isPending}>
            Create batch
          </BusyButton>
        </form>
        {invalid && (
          <p className="error" role="alert">
            {invalid}
          </p>
        )}
        <ErrorBox error={create.error} />
      </section>
      <h2 id="batches">Batches</h2>
      <ErrorBox error={list.error} />
      {list.data && list.data.items.length === 0 && <p>No payout batch yet.</p>}
      {list.data && list.data.items.length > 0 && (
        <table aria-labelledby="batches">
          <thead>
            <tr>
              <th scope="col">Batch</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Lines</th>
              <th scope="col">Total</th>
              <th scope="col">Open</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((b) => (
              <tr key={b.id}>
                <td>
                  <Link to={`/payouts/${b.id}`}>Batch {b.number}</Link>
                </td>
                <td>
                  <StatusBadge status={b.status} />
                </td>
                <td>{formatTime(b.createdAt)}</td>
                <td>{b.lineCount}</td>
                <td>{formatMoney(b.total, b.currency)}</td>
                <td>{formatMoney(b.lines.OPEN.amount, b.currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager next={list.data?.nextCursor} cursors={cursors} setCursors={setCursors} />
    </>
  );
}

function FailLine({
  batchId,
  lineId,
  name,
  onDone,
}: {
  batchId: string;
  lineId: string;
  name: string;
  onDone: (text: string) => void;
}) {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const fail = useMutation({
    mutationFn: () =>
      ok(
        api.POST('/api/admin/payouts/{id}/lines/{lineId}/failed', {
          params: { path: { id: batchId, lineId } },
          body: reason.trim() ? { reason: reason.trim() } : null,
        }),
      ),
    onSuccess: (line) => {
      void client.invalidateQueries({ queryKey: queryKeys.payout(batchId) });
      void client.invalidateQueries({ queryKey: queryKeys.payoutLines(batchId) });
      void client.invalidateQueries({ queryKey: queryKeys.payouts });
      void client.invalidateQueries({ queryKey: queryKeys.balances });
      onDone(
        `Line ${line.reference} marked failed: ${formatMoney(line.amount, line.currency)} is back on ${line.name}'s balance.`,
      );
    },
  });
  if (!open) {
    return (
      <button
        type="button"
        className="secondary"
        aria-label={`Mark ${name}'s line failed`}
        onClick={() => setOpen(true)}
      >
        Mark failed
      </button>
    );
  }
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        fail.mutate();
      }}
      aria-label={`Mark ${name}'s line failed`}
      className="inline-form"
    >
      <Field label="Reason" maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} autoFocus />
      <BusyButton type="submit" busy={fail.isPending}>
        Confirm failed
      </BusyButton>
      <button type="button" className="secondary" onClick={() => setOpen(false)}>
        Keep
      </button>
      <ErrorBox error={fail.error} />
    </form>
  );
}

export function PayoutPage({ id }: { id: string }) {
  const client = useQueryClient();
  const { cursors, setCursors, cursor } = useCursors();
  const [notice, setNotice] = useState<{ n: number; text: string } | null>(null);
  const say = (text: string) => setNotice((n) => ({ n: (n?.n ?? 0) + 1, text }));
  const batch = useQuery({
    queryKey: queryKeys.payout(id),
    queryFn: () => ok(api.GET('/api/admin/payouts/{id}', { params: { path: { id } } })) as Promise<Batch>,
  });
  const lines = useQuery({
    queryKey: queryKeys.payoutLinesPage(id, cursor),
    queryFn: () =>
      ok(
        api.GET('/api/admin/payouts/{id}/lines', {
          params: { path: { id }, query: { limit: 50, ...(cursor ? { cursor } : {}) } },
        }),
      ),
  });
  const download = useMutation({
    mutationFn: async () => {
      const blob = await ok(
        api.GET('/api/admin/payouts/{id}', { params: { path: { id }, query: { format: 'csv' } }, parseAs: 'blob' }),
      );
      const b = batch.data!;
      saveBlob(blob as Blob, `payout-${b.number}-${b.currency}.csv`);
    },
  });
  const paid = useMutation({
    mutationFn: () => ok(api.POST('/api/admin/payouts/{id}/paid', { params: { path: { id } } })),
    onSuccess: (b) => {
      client.setQueryData(queryKeys.payout(id), b);
      void client.invalidateQueries({ queryKey: queryKeys.payoutLines(id) });
      void client.invalidateQueries({ queryKey: queryKeys.payouts });
      say(`Batch ${b.number} is paid and closed.`);
    },
  });
  const b = batch.data;
  return (
    <>
      <PageTitle>{b ? `Payout batch ${b.number}` : 'Payout batch'}</PageTitle>
      <p>
        <Link to="/payouts">All batches</Link>
      </p>
      <ErrorBox error={batch.error ?? download.error ?? paid.error} />
      {notice && <FocusNotice key={notice.n}>{notice.text}</FocusNotice>}
      {b && (
        <>
          <dl className="details">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={b.status} />
            </dd>
            <dt>Currency</dt>
            <dd>{b.currency}</dd>
            <dt>Total</dt>
            <dd>{formatMoney(b.total, b.currency)}</dd>
            <dt>Lines</dt>
            <dd>
              {b.lineCount} ({b.lines.OPEN.lines} open, {b.lines.PAID.lines} paid, {b.lines.FAILED.lines} failed)
            </dd>
            <dt>Created</dt>
            <dd>{formatTime(b.createdAt)}</dd>
          </dl>
          <div className="actions">
            <BusyButton type="button" busy={download.isPending} onClick={() => download.mutate()}>
              Download CSV
            </BusyButton>
            {b.status === 'OPEN' && (
              <BusyButton type="button" busy={paid.isPending} onClick={() => paid.mutate()}>
                Mark paid
              </BusyButton>
            )}
          </div>
          <p className="hint">
            The CSV holds the open lines only: upload it to the bank or mobile-money provider, mark the lines it
            rejected failed, then the batch paid.
          </p>
        </>
      )}
      <h2 id="lines">Lines</h2>
      <ErrorBox error={lines.error} />
      {lines.data && (
        <table aria-labelledby="lines">
          <thead>
            <tr>
              <th scope="col">Reference</th>
              <th scope="col">Name</th>
              <th scope="col">Phone</th>
              <th scope="col">Amount</th>
              <th scope="col">Status</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {lines.data.items.map((l) => (
              <tr key={l.id}>
                <td>{l.reference}</td>
                <td>{l.name}</td>
                <td>{l.phone}</td>
                <td>{formatMoney(l.amount, l.currency)}</td>
                <td>
                  <StatusBadge status={l.status} />
                  {l.failureReason ? ` ${l.failureReason}` : ''}
                </td>
                <td>{l.status === 'OPEN' && <FailLine batchId={id} lineId={l.id} name={l.name} onDone={say} />}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager next={lines.data?.nextCursor} cursors={cursors} setCursors={setCursors} />
    </>
  );
}
