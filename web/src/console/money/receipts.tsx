// Admin: the settlements and business payments recorded, newest first, in every currency or one
// (GET /admin/settlements, GET /admin/business-payments; contract section 21). Names and references
// are shown as text.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../../shared/api/client';
import type { Schemas } from '../../shared/api/types';
import { queryKeys } from '../../shared/query-keys';
import { ErrorBox, formatMoney, formatTime } from '../../shared/ui';
import { Pager, useCursors } from '../pager';
import { useCurrencyFilter } from './currency-filter';

// The JSON page (the routes also answer CSV with Accept: text/csv).
type SettlementPage = Schemas['/api/admin/settlements']['get']['responses'][200]['content']['application/json'];
type BusinessPaymentPage =
  Schemas['/api/admin/business-payments']['get']['responses'][200]['content']['application/json'];

interface Row {
  id: string;
  party: string;
  amount: number;
  currency: string;
  reference: string;
  recordedByName: string;
  createdAt: string;
}
interface ReceiptsQuery {
  limit: number;
  currency?: string;
  cursor?: string;
}

/**
 * One list with its currency filter and pager. Three characters go to the API, which judges them
 * ("K1S": its 400 message is shown); fewer are no filter yet, as on the balances above.
 */
function Receipts({
  id,
  title,
  party,
  noun,
  queryKey,
  load,
}: {
  id: string;
  title: string;
  party: string;
  /** "settlement": "No settlement recorded yet." */
  noun: string;
  queryKey: (currency: string, cursor: string | undefined) => readonly unknown[];
  load: (query: ReceiptsQuery) => Promise<{ items: Row[]; nextCursor?: string | null }>;
}) {
  const { cursors, setCursors, cursor } = useCursors();
  const { filter, field: currencyFilter } = useCurrencyFilter(() => setCursors([]));
  const list = useQuery({
    queryKey: queryKey(filter, cursor),
    queryFn: () => load({ limit: 10, ...(filter ? { currency: filter } : {}), ...(cursor ? { cursor } : {}) }),
  });
  const rows = list.data?.items;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {currencyFilter}
      <ErrorBox error={list.error} />
      {rows && rows.length === 0 && <p>{filter ? `No ${noun} in ${filter}.` : `No ${noun} recorded yet.`}</p>}
      {rows && rows.length > 0 && (
        <table aria-labelledby={id}>
          <thead>
            <tr>
              <th scope="col">Recorded</th>
              <th scope="col">{party}</th>
              <th scope="col" className="amount">
                Amount
              </th>
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
      <Pager next={list.data?.nextCursor} cursors={cursors} setCursors={setCursors} label={`${title}: pages`} />
    </section>
  );
}

export function RecentSettlements() {
  return (
    <Receipts
      id="settlements-heading"
      title="Recent settlements"
      party="Driver"
      noun="settlement"
      queryKey={queryKeys.settlementsPage}
      load={async (query) => {
        const page = (await ok(api.GET('/api/admin/settlements', { params: { query } }))) as SettlementPage;
        return { ...page, items: page.items.map((s) => ({ ...s, party: s.driverName })) };
      }}
    />
  );
}

export function RecentBusinessPayments() {
  return (
    <Receipts
      id="payments-heading"
      title="Recent business payments"
      party="Business"
      noun="business payment"
      queryKey={queryKeys.businessPaymentsPage}
      load={async (query) => {
        const page = (await ok(api.GET('/api/admin/business-payments', { params: { query } }))) as BusinessPaymentPage;
        return { ...page, items: page.items.map((p) => ({ ...p, party: p.businessName })) };
      }}
    />
  );
}
