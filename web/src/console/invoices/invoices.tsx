// A business's monthly invoices (contract section 21): the list, one invoice's lines and totals, and
// its PDF (invoice-pdf.tsx).
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../../shared/api/client';
import type { Schemas } from '../../shared/api/types';
import { queryKeys } from '../../shared/query-keys';
import { ErrorBox, PageTitle, formatMoney, formatTime } from '../../shared/ui';
import { Link } from '../router';
import { Pager, useCursors } from '../pager';
import { InvoicePdfButton, useInvoicePdf } from './invoice-pdf';

type Invoice = Schemas['/api/businesses/me/invoices/{id}']['get']['responses'][200]['content']['application/json'];

const KIND: Record<string, string> = {
  DELIVERY: 'Delivery',
  CANCELLATION_FEE: 'Cancellation fee',
  TIP: 'Tip',
  CASH_ON_DELIVERY: 'Cash on delivery',
  PAYMENT: 'Payment',
  PAYOUT: 'Payout',
  OTHER: 'Other',
};

export function InvoicesPage() {
  const { cursors, setCursors, cursor } = useCursors();
  const list = useQuery({
    queryKey: queryKeys.invoicesPage(cursor),
    queryFn: () =>
      ok(api.GET('/api/businesses/me/invoices', { params: { query: { limit: 20, ...(cursor ? { cursor } : {}) } } })),
  });
  return (
    <>
      <PageTitle>Invoices</PageTitle>
      <p className="hint">One invoice per month (UTC), issued on the 1st for the month before.</p>
      <ErrorBox error={list.error} />
      {list.isPending && <p role="status">Loading…</p>}
      {list.data && list.data.items.length === 0 && <p>No invoices yet.</p>}
      {list.data && list.data.items.length > 0 && (
        <table>
          <caption className="sr-only">Invoices, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Invoice</th>
              <th scope="col">Month</th>
              <th scope="col">Deliveries</th>
              <th scope="col" className="amount">
                Net
              </th>
              <th scope="col" className="amount">
                Closing balance
              </th>
              <th scope="col" className="amount">
                Amount due
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((i) => (
              <tr key={i.id}>
                <td>
                  <Link to={`/invoices/${i.id}`}>{i.number}</Link>
                </td>
                <td>{i.month}</td>
                <td>{i.totals.deliveryCount}</td>
                <td className="amount">{formatMoney(i.totals.net, i.currency)}</td>
                <td className="amount">{formatMoney(i.closingBalance, i.currency)}</td>
                <td className="amount">{formatMoney(i.amountDue, i.currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager next={list.data?.nextCursor} cursors={cursors} setCursors={setCursors} />
    </>
  );
}

export function InvoicePage({ id }: { id: string }) {
  const invoice = useQuery({
    queryKey: queryKeys.invoice(id),
    queryFn: () => ok(api.GET('/api/businesses/me/invoices/{id}', { params: { path: { id } } })) as Promise<Invoice>,
  });
  const download = useInvoicePdf('business');
  const i = invoice.data;
  const money = (amount: number) => formatMoney(amount, i!.currency);
  return (
    <>
      <PageTitle>{i ? `Invoice ${i.number}` : 'Invoice'}</PageTitle>
      <p>
        <Link to="/invoices">All invoices</Link>
      </p>
      <ErrorBox error={invoice.error ?? download.error} />
      {invoice.isPending && <p role="status">Loading…</p>}
      {i && (
        <>
          <dl className="details">
            <dt>Month</dt>
            <dd>{i.month} (UTC)</dd>
            <dt>Billed to</dt>
            <dd>{i.business.name}</dd>
            <dt>Issued</dt>
            <dd>{formatTime(i.issuedAt)}</dd>
            <dt>Opening balance</dt>
            <dd>{money(i.openingBalance)}</dd>
            <dt>Net for the month</dt>
            <dd>{money(i.totals.net)}</dd>
            <dt>Closing balance</dt>
            <dd>{money(i.closingBalance)}</dd>
            <dt>Amount due</dt>
            <dd data-testid="amount-due">{money(i.amountDue)}</dd>
          </dl>
          <div className="actions">
            <InvoicePdfButton download={download} invoice={i} />
          </div>
          <h2 id="totals-heading">Totals</h2>
          <table className="totals" aria-labelledby="totals-heading">
            <tbody>
              <tr>
                <th scope="row">Deliveries ({i.totals.deliveryCount})</th>
                <td className="amount">{money(i.totals.deliveries)}</td>
              </tr>
              <tr>
                <th scope="row">Cancellation fees</th>
                <td className="amount">{money(i.totals.cancellationFees)}</td>
              </tr>
              <tr>
                <th scope="row">Tips</th>
                <td className="amount">{money(i.totals.tips)}</td>
              </tr>
              <tr>
                <th scope="row">Cash on delivery collected for you</th>
                <td className="amount">{money(i.totals.cashOnDelivery)}</td>
              </tr>
              <tr>
                <th scope="row">Payments received</th>
                <td className="amount">{money(i.totals.payments)}</td>
              </tr>
              {i.totals.payouts !== 0 && (
                <tr>
                  <th scope="row">Payouts</th>
                  <td className="amount">{money(i.totals.payouts)}</td>
                </tr>
              )}
            </tbody>
          </table>
          <h2 id="lines-heading">Lines</h2>
          <p className="hint">Negative amounts are charges; positive amounts are credits to you.</p>
          <table aria-labelledby="lines-heading">
            <thead>
              <tr>
                <th scope="col">Date</th>
                <th scope="col">Kind</th>
                <th scope="col">Reference</th>
                <th scope="col" className="amount">
                  Amount
                </th>
              </tr>
            </thead>
            <tbody>
              {i.lines.map((l, n) => (
                <tr key={n}>
                  <td>{formatTime(l.date)}</td>
                  <td>{KIND[l.kind] ?? l.description}</td>
                  <td>
                    {l.jobId && l.jobType === 'PACKAGE' ? (
                      <Link to={`/deliveries/${l.jobId}`}>{l.reference ?? l.jobId.slice(0, 8)}</Link>
                    ) : (
                      (l.reference ?? '—')
                    )}
                  </td>
                  <td className="amount">{money(l.amount)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </>
  );
}
