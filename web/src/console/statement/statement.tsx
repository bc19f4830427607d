// A business's statement: its finished packages in a period with what each is charged, the totals per
// currency, and the same as a CSV file.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, ok } from '../../shared/api/client';
import type { Schemas } from '../../shared/api/types';
import { queryKeys } from '../../shared/query-keys';
import { BusyButton, ErrorBox, Field, PageTitle, StatusBadge, formatMoney, formatTime } from '../../shared/ui';
import { Link } from '../router';

type Statement = Schemas['/api/businesses/me/statement']['get']['responses'][200]['content']['application/json'];

const day = (d: Date) => d.toISOString().slice(0, 10);
/** The API's `to` is exclusive; the form's is the last day included. */
const nextDay = (date: string) => day(new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000));

function money(amount: number | null, currency: string | null) {
  return amount === null || currency === null ? '—' : formatMoney(amount, currency);
}

export function StatementPage() {
  const today = new Date();
  const [form, setForm] = useState({
    from: day(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1))),
    to: day(today),
  });
  const [period, setPeriod] = useState(form);
  const query = { from: period.from, to: nextDay(period.to) };
  const statement = useQuery({
    queryKey: queryKeys.statement(query.from, query.to),
    queryFn: () => ok(api.GET('/api/businesses/me/statement', { params: { query } })) as Promise<Statement>,
  });
  const download = useMutation({
    mutationFn: async () => {
      // The access token lives in memory only, so a plain link could not authenticate.
      const blob = await ok(
        api.GET('/api/businesses/me/statement', { params: { query: { ...query, format: 'csv' } }, parseAs: 'blob' }),
      );
      const url = URL.createObjectURL(blob);
      const a = document.createElement('a');
      a.href = url;
      a.download = `statement-${period.from}-to-${period.to}.csv`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setPeriod(form);
  };
  const s = statement.data;

  return (
    <>
      <PageTitle>Statement</PageTitle>
      <form className="toolbar" onSubmit={submit} aria-label="Period">
        <Field
          label="From"
          type="date"
          required
          value={form.from}
          onChange={(e) => setForm({ ...form, from: e.target.value })}
        />
        <Field
          label="To (included)"
          type="date"
          required
          min={form.from}
          value={form.to}
          onChange={(e) => setForm({ ...form, to: e.target.value })}
        />
        <button type="submit" className="field-button">
          Show
        </button>
        <BusyButton
          type="button"
          className="secondary field-button"
          busy={download.isPending}
          disabled={!s}
          onClick={() => download.mutate()}
        >
          Download CSV
        </BusyButton>
      </form>
      <p className="hint">
        Days are UTC. The deliveries that reached a final status (delivered, failed, cancelled) in the period; amounts
        as charged.
      </p>
      <ErrorBox error={statement.error ?? download.error} />
      {statement.isPending && <p role="status">Loading…</p>}
      {s && (
        <>
          <h2 id="totals-heading">Totals</h2>
          {s.totals.length === 0 ? (
            <p>No finished deliveries in this period.</p>
          ) : (
            <table className="totals" aria-labelledby="totals-heading">
              <thead>
                <tr>
                  <th scope="col">Currency</th>
                  <th scope="col">Deliveries</th>
                  <th scope="col">Delivery charges</th>
                  <th scope="col">Cancellation fees</th>
                  <th scope="col">Amount</th>
                </tr>
              </thead>
              <tbody>
                {s.totals.map((t) => (
                  <tr key={t.currency ?? ''}>
                    <th scope="row">{t.currency ?? 'No price'}</th>
                    <td>{t.packages}</td>
                    <td>{money(t.deliveryCharges, t.currency)}</td>
                    <td>{money(t.cancellationFees, t.currency)}</td>
                    <td data-testid="total-amount">{money(t.amount, t.currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {s.items.length > 0 && (
            <>
              <h2 id="rows-heading">Deliveries</h2>
              <table aria-labelledby="rows-heading">
                <thead>
                  <tr>
                    <th scope="col">Delivery</th>
                    <th scope="col">Status</th>
                    <th scope="col">Finished</th>
                    <th scope="col">Vehicle</th>
                    <th scope="col">Price</th>
                    <th scope="col">Delivery charge</th>
                    <th scope="col">Cancellation fee</th>
                    <th scope="col">Amount</th>
                  </tr>
                </thead>
                <tbody>
                  {s.items.map((i) => (
                    <tr key={i.packageId}>
                      <td>
                        <Link to={`/deliveries/${i.packageId}`}>{i.reference ?? i.packageId.slice(0, 8)}</Link>
                      </td>
                      <td>
                        <StatusBadge status={i.status} />
                      </td>
                      <td>{formatTime(i.finishedAt)}</td>
                      <td>{i.vehicleType}</td>
                      <td>{money(i.price, i.currency)}</td>
                      <td>{money(i.deliveryCharge, i.currency)}</td>
                      <td>{money(i.cancellationFee, i.currency)}</td>
                      <td>{money(i.amount, i.currency)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          )}
        </>
      )}
    </>
  );
}
