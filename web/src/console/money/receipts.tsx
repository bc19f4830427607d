// Admin: the settlements and business payments recorded, newest first (GET /admin/settlements,
// GET /admin/business-payments; contract section 21). Names and references are shown as text.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../../shared/api/client';
import { queryKeys } from '../../shared/query-keys';
import { ErrorBox, formatMoney, formatTime } from '../../shared/ui';
import { Pager, useCursors } from '../pager';

interface Row {
  id: string;
  party: string;
  amount: number;
  currency: string;
  reference: string;
  recordedByName: string;
  createdAt: string;
}

function ReceiptsTable({ id, title, party, rows, next, cursors, setCursors, error, empty }: {
  id: string;
  title: string;
  party: string;
  rows: Row[] | undefined;
  next: string | null | undefined;
  cursors: string[];
  setCursors: (c: string[]) => void;
  error: unknown;
  empty: string;
}) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <ErrorBox error={error} />
      {rows && rows.length === 0 && <p>{empty}</p>}
      {rows && rows.length > 0 && (
        <table aria-labelledby={id}>
          <thead>
            <tr>
              <th scope="col">Recorded</th>
              <th scope="col">{party}</th>
              <th scope="col" className="amount">Amount</th>
              <th scope="col">Reference</th>
              <th scope="col">Recorded by</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id}>
                <td>
                  <time dateTime={r.createdAt}>{formatTime(r.createdAt)}</time>
                </td>
                <td>{r.party}</td>
                <td className="amount">{formatMoney(r.amount, r.currency)}</td>
                <td>{r.reference}</td>
                <td>{r.recordedByName}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager next={next} cursors={cursors} setCursors={setCursors} label={`${title}: pages`} />
    </section>
  );
}

export function RecentSettlements() {
  const { cursors, setCursors, cursor } = useCursors();
  const list = useQuery({
    queryKey: queryKeys.settlementsPage(cursor),
    queryFn: () => ok(api.GET('/api/admin/settlements', { params: { query: { limit: 10, ...(cursor ? { cursor } : {}) } } })),
  });
  const rows = list.data?.items.map((s) => ({ ...s, party: s.driverName }));
  return (
    <ReceiptsTable
      id="settlements-heading"
      title="Recent settlements"
      party="Driver"
      rows={rows}
      next={list.data?.nextCursor}
      cursors={cursors}
      setCursors={setCursors}
      error={list.error}
      empty="No settlement recorded yet."
    />
  );
}

export function RecentBusinessPayments() {
  const { cursors, setCursors, cursor } = useCursors();
  const list = useQuery({
    queryKey: queryKeys.businessPaymentsPage(cursor),
    queryFn: () => ok(api.GET('/api/admin/business-payments', { params: { query: { limit: 10, ...(cursor ? { cursor } : {}) } } })),
  });
  const rows = list.data?.items.map((p) => ({ ...p, party: p.businessName }));
  return (
    <ReceiptsTable
      id="payments-heading"
      title="Recent business payments"
      party="Business"
      rows={rows}
      next={list.data?.nextCursor}
      cursors={cursors}
      setCursors={setCursors}
      error={list.error}
      empty="No business payment recorded yet."
    />
  );
}
