// One driver's earnings for a period (today, this week or this month, UTC): the jobs booked, the
// totals and the current balance, and the same as a CSV file (contract section 21, docs/money.md).
// An admin reads GET /admin/drivers/:driverId/earnings (from Balances), a company
// GET /companies/me/drivers/:driverId/earnings (from Earnings; its own drivers only).
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ok } from '../../shared/api/client';
import type { Schemas } from '../../shared/api/types';
import { saveBlob } from '../../shared/download';
import { queryKeys } from '../../shared/query-keys';
import { BusyButton, ErrorBox, PageTitle, formatMoney, formatTime } from '../../shared/ui';
import { Link, useLocation } from '../router';
import { PeriodPicker, isPeriod, periodStart, type Period } from './earnings';

type Report = Schemas['/api/admin/drivers/{driverId}/earnings']['get']['responses'][200]['content']['application/json'];
type Viewer = 'ADMIN' | 'COMPANY';

function fetchReport(viewer: Viewer, driverId: string, from: string): Promise<Report> {
  const params = { path: { driverId }, query: { from, format: 'json' as const } };
  const report =
    viewer === 'ADMIN'
      ? api.GET('/api/admin/drivers/{driverId}/earnings', { params })
      : api.GET('/api/companies/me/drivers/{driverId}/earnings', { params });
  return ok(report) as Promise<Report>;
}

function fetchCsv(viewer: Viewer, driverId: string, from: string): Promise<Blob> {
  // The access token lives in memory only, so a plain link could not authenticate.
  const params = { path: { driverId }, query: { from, format: 'csv' as const } };
  const csv =
    viewer === 'ADMIN'
      ? api.GET('/api/admin/drivers/{driverId}/earnings', { params, parseAs: 'blob' })
      : api.GET('/api/companies/me/drivers/{driverId}/earnings', { params, parseAs: 'blob' });
  return ok(csv) as Promise<Blob>;
}

/** The driver's name: an admin reads the account, a company its drivers' earnings list (the page it came from). */
function useDriverName(viewer: Viewer, driverId: string, from: string): string | undefined {
  const user = useQuery({
    queryKey: queryKeys.adminUser(driverId),
    queryFn: () => ok(api.GET('/api/admin/users/{id}', { params: { path: { id: driverId } } })),
    enabled: viewer === 'ADMIN',
  });
  const company = useQuery({
    queryKey: queryKeys.companyEarnings(from),
    queryFn: () => ok(api.GET('/api/companies/me/earnings', { params: { query: { from } } })),
    enabled: viewer === 'COMPANY',
  });
  const named = viewer === 'ADMIN' ? user.data : company.data?.drivers.find((d) => d.driverId === driverId);
  return named ? `${named.firstName} ${named.lastName}` : undefined;
}

const JOB_TYPE: Record<Report['jobs'][number]['jobType'], string> = { PACKAGE: 'Delivery', RIDE: 'Ride' };

export function DriverEarningsPage({ viewer, driverId }: { viewer: Viewer; driverId: string }) {
  const { query } = useLocation();
  const asked = query.get('period');
  const [period, setPeriod] = useState<Period>(isPeriod(asked) ? asked : 'week');
  const from = periodStart(period, new Date());
  const report = useQuery({
    queryKey: queryKeys.driverEarnings(driverId, from),
    queryFn: () => fetchReport(viewer, driverId, from),
  });
  // The name from the period the page opened with: a period changed later does not unset the title.
  const [openedFrom] = useState(from);
  const name = useDriverName(viewer, driverId, openedFrom);
  const download = useMutation({
    mutationFn: async () =>
      saveBlob(
        await fetchCsv(viewer, driverId, from),
        `earnings-${name ? name.replace(/[^\p{L}\p{N}]+/gu, '-') : driverId}-${from}.csv`,
      ),
  });
  const r = report.data;
  const currencies = r
    ? [...new Set([...r.totals.map((t) => t.currency), ...r.balances.map((b) => b.currency)])].sort()
    : [];
  const back =
    viewer === 'ADMIN'
      ? { to: '/balances', label: 'All balances' }
      : { to: `/earnings?period=${period}`, label: "All drivers' earnings" };
  return (
    <>
      {/* A new title once the name is known: the document's title follows it. */}
      <PageTitle key={name ?? ''}>{name ? `Earnings: ${name}` : 'Driver earnings'}</PageTitle>
      <p>
        <Link to={back.to}>{back.label}</Link>
      </p>
      <p className="hint">
        The driver's jobs booked in the period (UTC), with what each earned, and what the operator owes the driver now.
        Negative balance: cash the driver collected and still has to hand in.
      </p>
      <PeriodPicker period={period} onChange={setPeriod} />
      <div className="actions">
        <BusyButton
          type="button"
          className="secondary"
          busy={download.isPending}
          disabled={!r}
          onClick={() => download.mutate()}
        >
          Download CSV
        </BusyButton>
      </div>
      <ErrorBox error={report.error ?? download.error} />
      {report.isPending && <p role="status">Loading…</p>}
      {r && (
        <>
          <h2 id="driver-totals">Totals</h2>
          {currencies.length === 0 ? (
            <p>No jobs in this period and no balance.</p>
          ) : (
            <table className="totals" aria-labelledby="driver-totals">
              <thead>
                <tr>
                  <th scope="col">Currency</th>
                  <th scope="col">Jobs</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Earnings</th>
                  <th scope="col">Tips</th>
                  <th scope="col">Cash collected</th>
                  <th scope="col">Balance</th>
                </tr>
              </thead>
              <tbody>
                {currencies.map((c) => {
                  const t = r.totals.find((x) => x.currency === c);
                  const balance = r.balances.find((b) => b.currency === c)?.balance ?? 0;
                  return (
                    <tr key={c}>
                      <th scope="row">{c}</th>
                      <td>{t?.jobs ?? 0}</td>
                      <td>{formatMoney(t?.amount ?? 0, c)}</td>
                      <td>{formatMoney(t?.earnings ?? 0, c)}</td>
                      <td>{formatMoney(t?.tips ?? 0, c)}</td>
                      <td>{formatMoney(t?.cashCollected ?? 0, c)}</td>
                      <td className={balance < 0 ? 'negative' : undefined}>{formatMoney(balance, c)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
          <h2 id="driver-jobs">Jobs</h2>
          {r.jobs.length === 0 ? (
            <p>No jobs booked in this period.</p>
          ) : (
            <table aria-labelledby="driver-jobs">
              <thead>
                <tr>
                  <th scope="col">Date</th>
                  <th scope="col">Job</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Earnings</th>
                  <th scope="col">Tip</th>
                  <th scope="col">Cash collected</th>
                </tr>
              </thead>
              <tbody>
                {r.jobs.map((j) => {
                  const label = `${JOB_TYPE[j.jobType]} ${j.jobId.slice(0, 8)}${j.kind === 'CANCELLATION_FEE' ? ' (cancellation fee)' : ''}`;
                  return (
                    <tr key={`${j.jobType}-${j.jobId}-${j.kind}`}>
                      <td>{formatTime(j.completedAt)}</td>
                      <td>{j.jobType === 'PACKAGE' ? <Link to={`/deliveries/${j.jobId}`}>{label}</Link> : label}</td>
                      <td>{formatMoney(j.amount, j.currency)}</td>
                      <td>{formatMoney(j.earnings, j.currency)}</td>
                      <td>{formatMoney(j.tip, j.currency)}</td>
                      <td>{formatMoney(j.cashCollected, j.currency)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          )}
        </>
      )}
    </>
  );
}
