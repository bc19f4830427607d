// The driver's earnings (contract section 21): today and this week (from Monday, UTC), from
// GET /drivers/me/earnings, with the balance (negative: cash the driver owes the operator).
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../shared/api/client';
import { driverKeys } from '../shared/query-keys';
import { ErrorBox, formatMoney } from '../shared/ui';
import { Title } from './ui';

const DAY_MS = 86_400_000;

/** Monday 00:00 UTC of this week, as a date. */
function weekStart(now: Date): string {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const sinceMonday = (new Date(today).getUTCDay() + 6) % 7;
  return new Date(today - sinceMonday * DAY_MS).toISOString().slice(0, 10);
}

const fetchReport = (from?: string) =>
  ok(api.GET('/api/drivers/me/earnings', { params: { query: from ? { from } : {} } }));

function useEarnings(from?: string) {
  return useQuery({
    queryKey: driverKeys.earnings(from),
    // JSON (the route also answers CSV, with Accept: text/csv).
    queryFn: async () => (await fetchReport(from)) as Exclude<Awaited<ReturnType<typeof fetchReport>>, string>,
    refetchInterval: 60_000,
  });
}

type Report = NonNullable<ReturnType<typeof useEarnings>['data']>;

function Period({ title, report }: { title: string; report: Report | undefined }) {
  if (!report) return null;
  return (
    <section className="card" aria-label={title}>
      <h2>{title}</h2>
      {report.totals.length === 0 && <p>No jobs yet.</p>}
      {report.totals.map((t) => (
        <dl key={t.currency} className="facts">
          <dt>Jobs</dt>
          <dd>{t.jobs}</dd>
          <dt>Earnings</dt>
          <dd>{formatMoney(t.earnings, t.currency)}</dd>
          <dt>Tips</dt>
          <dd>{formatMoney(t.tips, t.currency)}</dd>
          <dt>Cash collected</dt>
          <dd>{formatMoney(t.cashCollected, t.currency)}</dd>
        </dl>
      ))}
    </section>
  );
}

export function EarningsScreen() {
  const today = useEarnings();
  const week = useEarnings(weekStart(new Date()));
  const balances = today.data?.balances ?? [];
  return (
    <>
      <Title>Earnings</Title>
      <ErrorBox error={today.error ?? week.error} />
      {(today.isPending || week.isPending) && <p role="status">Loading…</p>}
      <Period title="Today" report={today.data} />
      <Period title="This week" report={week.data} />
      {balances.map((b) => (
        <p key={b.currency}>
          {b.balance < 0 ? (
            <>
              You owe <strong>{formatMoney(-b.balance, b.currency)}</strong> (cash collected less your earnings): hand
              it in at the office.
            </>
          ) : (
            <>
              Balance: <strong>{formatMoney(b.balance, b.currency)}</strong>, paid out with the next payout.
            </>
          )}
        </p>
      ))}
    </>
  );
}
