// Admin: run a month's business invoices (POST /admin/invoices/run, idempotent) and the invoices
// issued, newest first, for every month or one (GET /admin/invoices; contract section 21), each with
// its PDF (invoice-pdf.tsx). Months are UTC.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../shared/api/client';
import { queryKeys } from '../../shared/query-keys';
import { BusyButton, ErrorBox, Field, FocusNotice, PageTitle, formatMoney, formatTime } from '../../shared/ui';
import { Pager, useCursors } from '../pager';
import { InvoicePdfButton, useInvoicePdf } from './invoice-pdf';

/** The month before this one, UTC, as YYYY-MM: the latest month that can be invoiced. */
export function lastMonthUtc(now = new Date()): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
}

function RunInvoices() {
  const client = useQueryClient();
  const latest = lastMonthUtc();
  const [month, setMonth] = useState(latest);
  const [done, setDone] = useState<{ n: number; text: string } | null>(null);
  const run = useMutation({
    mutationFn: (body: { month: string }) => ok(api.POST('/api/admin/invoices/run', { body })),
    onSuccess: (result) => {
      void client.invalidateQueries({ queryKey: queryKeys.adminInvoices });
      const text =
        result.created > 0
          ? `Issued ${result.created} ${result.created === 1 ? 'invoice' : 'invoices'} for ${result.month}.`
          : `No new invoices for ${result.month}: every business with activity in it has its invoice already.`;
      setDone((d) => ({ n: (d?.n ?? 0) + 1, text }));
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    run.mutate({ month: month.trim() });
  };
  return (
    <section aria-labelledby="run-invoices">
      <h2 id="run-invoices">Run invoices</h2>
      <p className="hint">
        One invoice per business with activity in the month (UTC). They are issued on the 1st for the month before;
        running a month again issues only what is missing.
      </p>
      <form className="toolbar" onSubmit={submit} aria-labelledby="run-invoices">
        <Field
          label="Month"
          type="month"
          required
          max={latest}
          value={month}
          onChange={(e) => setMonth(e.target.value)}
        />
        <BusyButton type="submit" className="field-button" busy={run.isPending}>
          Run invoices
        </BusyButton>
      </form>
      <ErrorBox error={run.error} />
      {done && <FocusNotice key={done.n}>{done.text}</FocusNotice>}
    </section>
  );
}

/** A whole YYYY-MM goes to the API, which judges it (2026-13: its 400 message); a partial one is no filter yet. */
const MONTH_SHAPE = /^\d{4}-\d{2}$/;

export function AdminInvoicesPage() {
  const { cursors, setCursors, cursor } = useCursors();
  const [month, setMonth] = useState('');
  const filter = MONTH_SHAPE.test(month) ? month : '';
  const list = useQuery({
    queryKey: queryKeys.adminInvoicesPage(filter, cursor),
    queryFn: () =>
      ok(
        api.GET('/api/admin/invoices', {
          params: { query: { limit: 20, ...(filter ? { month: filter } : {}), ...(cursor ? { cursor } : {}) } },
        }),
      ),
  });
  const download = useInvoicePdf('admin');
  const show = (value: string) => {
    setMonth(value);
    setCursors([]);
  };
  return (
    <>
      <PageTitle>Invoices</PageTitle>
      <RunInvoices />
      <h2 id="issued">Issued invoices</h2>
      <div className="toolbar">
        <Field
          label="Filter by month"
          type="month"
          max={lastMonthUtc()}
          value={month}
          onChange={(e) => show(e.target.value)}
        />
        {month && (
          <button type="button" className="secondary field-button" onClick={() => show('')}>
            All months
          </button>
        )}
      </div>
      <ErrorBox error={list.error} />
      <ErrorBox error={download.error} />
      {list.isPending && <p role="status">Loading…</p>}
      {list.data && list.data.items.length === 0 && <p>{filter ? `No invoices for ${filter}.` : 'No invoices yet.'}</p>}
      {list.data && list.data.items.length > 0 && (
        <table aria-labelledby="issued">
          <thead>
            <tr>
              <th scope="col">Invoice</th>
              <th scope="col">Business</th>
              <th scope="col">Month</th>
              <th scope="col" className="amount">
                Amount due
              </th>
              <th scope="col">Issued</th>
              <th scope="col">PDF</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((i) => (
              <tr key={i.id}>
                <td>{i.number}</td>
                <td>{i.business.name}</td>
                <td>{i.month}</td>
                <td className="amount">{formatMoney(i.amountDue, i.currency)}</td>
                <td>
                  <time dateTime={i.issuedAt}>{formatTime(i.issuedAt)}</time>
                </td>
                <td>
                  <InvoicePdfButton
                    download={download}
                    invoice={i}
                    className="secondary"
                    label={`Download PDF of ${i.number}`}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager next={list.data?.nextCursor} cursors={cursors} setCursors={setCursors} />
    </>
  );
}
