// Company: its drivers' earnings for a period (today, this week or this month, UTC) and their current
// balances, from GET /companies/me/earnings (contract section 21, docs/money.md). A row per driver and
// currency; a driver without jobs or balance shows a row of zero jobs; a driver's name opens that
// driver's job-by-job report (driver-earnings.tsx).
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../../shared/api/client';
import { queryKeys } from '../../shared/query-keys';
import { ErrorBox, PageTitle, formatMoney } from '../../shared/ui';
import { Link, useLocation } from '../router';

const DAY_MS = 86_400_000;
export type Period = 'today' | 'week' | 'month';
export const PERIODS: { value: Period; label: string }[] = [
  { value: 'today', label: 'Today' },
  { value: 'week', label: 'This week' },
  { value: 'month', label: 'This month' },
];

/** The period's first day (UTC) as a date: today, Monday of this week, or the 1st of this month. */
export function periodStart(period: Period, now: Date): string {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  if (period === 'today') return new Date(today).toISOString().slice(0, 10);
  if (period === 'week')
    return new Date(today - ((new Date(today).getUTCDay() + 6) % 7) * DAY_MS).toISOString().slice(0, 10);
  return new Date(today).toISOString().slice(0, 8) + '01';
}

export const isPeriod = (value: string | null): value is Period => PERIODS.some((p) => p.value === value);

/** The period radio buttons of the earnings pages. */
export function PeriodPicker({ period, onChange }: { period: Period; onChange: (period: Period) => void }) {
  return (
    <fieldset className="toolbar">
      <legend>Period</legend>
      {PERIODS.map((p) => (
        <label key={p.value}>
          <input
            type="radio"
            name="period"
            value={p.value}
            checked={period === p.value}
            onChange={() => onChange(p.value)}
          />{' '}
          {p.label}
        </label>
      ))}
    </fieldset>
  );
}

export function CompanyEarningsPage() {
  const { query } = useLocation();
  const asked = query.get('period');
  // ?period= when coming back from a driver's report.
  const [period, setPeriod] = useState<Period>(isPeriod(asked) ? asked : 'week');
  const from = periodStart(period, new Date());
  const report = useQuery({
    queryKey: queryKeys.companyEarnings(from),
    queryFn: () => ok(api.GET('/api/companies/me/earnings', { params: { query: { from } } })),
  });
  type Data = NonNullable<typeof report.data>['drivers'][number];
  interface Row {
    key: string;
    driverId: string;
    name: string;
    currency: string | null;
    total: Data['totals'][number] | undefined;
    balance: Data['balances'][number] | undefined;
  }
  const rows = (report.data?.drivers ?? []).flatMap((d): Row[] => {
    const currencies = [...new Set([...d.totals.map((t) => t.currency), ...d.balances.map((b) => b.currency)])];
    const name = `${d.firstName} ${d.lastName}`;
    if (currencies.length === 0)
      return [{ key: d.driverId, driverId: d.driverId, name, currency: null, total: undefined, balance: undefined }];
    return currencies.map((c) => ({
      key: `${d.driverId}-${c}`,
      driverId: d.driverId,
      name,
      currency: c,
      total: d.totals.find((t) => t.currency === c),
      balance: d.balances.find((b) => b.currency === c),
    }));
  });
  const money = (amount: number | undefined, currency: string | null) =>
    currency ? formatMoney(amount ?? 0, currency) : '—';
  return (
    <>
      <PageTitle>Earnings</PageTitle>
      <p className="hint">
        Your drivers' jobs booked in the period (UTC) and what the operator owes each now. Negative balance: cash the
        driver collected and still has to hand in. A driver's name opens that driver's jobs.
      </p>
      <PeriodPicker period={period} onChange={setPeriod} />
      <ErrorBox error={report.error} />
      {report.isPending && <p role="status">Loading…</p>}
      {report.data && rows.length === 0 && <p>Your company has no drivers yet.</p>}
      {rows.length > 0 && (
        <table>
          <caption className="sr-only">Earnings per driver from {from}</caption>
          <thead>
            <tr>
              <th scope="col">Driver</th>
              <th scope="col">Jobs</th>
              <th scope="col">Earnings</th>
              <th scope="col">Tips</th>
              <th scope="col">Cash collected</th>
              <th scope="col">Balance</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.key}>
                <th scope="row">
                  <Link to={`/drivers/${r.driverId}/earnings?period=${period}`}>{r.name}</Link>
                </th>
                <td>{r.total?.jobs ?? 0}</td>
                <td>{money(r.total?.earnings, r.currency)}</td>
                <td>{money(r.total?.tips, r.currency)}</td>
                <td>{money(r.total?.cashCollected, r.currency)}</td>
                <td className={(r.balance?.balance ?? 0) < 0 ? 'negative' : undefined}>
                  {money(r.balance?.balance, r.currency)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
