// Admin: every account with a non-zero balance, and the day's money in: a driver's cash handed in
// (settlement) and a business's payment, with the recent ones of each (contract section 21,
// docs/money.md "An operator's day"). A driver's name opens the driver's earnings (driver-earnings.tsx).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type FormEvent } from 'react';
import { api, ok } from '../../shared/api/client';
import { queryKeys } from '../../shared/query-keys';
import { BusyButton, ErrorBox, Field, FocusNotice, PageTitle, formatMoney } from '../../shared/ui';
import { newIdempotencyKey, toMajorText, toMinorUnits } from './money';
import { Pager, useCursors } from '../pager';
import { useCurrencyFilter } from './currency-filter';
import { Link } from '../router';
import { RecentBusinessPayments, RecentSettlements } from './receipts';

const KIND_LABEL: Record<string, string> = {
  DRIVER: 'Driver',
  BUSINESS: 'Business',
  CUSTOMER: 'Customer',
  OPERATOR_COMMISSION: 'Operator: commission',
  OPERATOR_BOOKING_FEES: 'Operator: booking fees',
  OPERATOR_CASH: 'Operator: cash held',
  OPERATOR_BANK: 'Operator: bank',
  PAYOUTS_CLEARING: 'Operator: payouts in flight',
};

type Kind = 'settlement' | 'payment';
interface Draft {
  partyId: string;
  amount: string;
  currency: string;
  reference: string;
}
const emptyDraft = (currency = 'KES'): Draft => ({ partyId: '', amount: '', currency, reference: '' });

function ReceiptForm({
  kind,
  draft,
  setDraft,
  formRef,
}: {
  kind: Kind;
  draft: Draft;
  setDraft: (d: Draft) => void;
  formRef: React.RefObject<HTMLFormElement | null>;
}) {
  const client = useQueryClient();
  const [done, setDone] = useState<{ n: number; text: string } | null>(null);
  const [invalid, setInvalid] = useState<string | null>(null);
  const label = kind === 'settlement' ? 'Record settlement' : 'Record business payment';
  const record = useMutation({
    mutationFn: async (input: Draft & { minor: number }) => {
      const headers = { 'idempotency-key': newIdempotencyKey() };
      const common = { amount: input.minor, currency: input.currency, reference: input.reference };
      return kind === 'settlement'
        ? ok(api.POST('/api/admin/settlements', { body: { driverId: input.partyId, ...common }, headers }))
        : ok(api.POST('/api/admin/business-payments', { body: { businessId: input.partyId, ...common }, headers }));
    },
    onSuccess: (receipt) => {
      void client.invalidateQueries({ queryKey: queryKeys.balances });
      void client.invalidateQueries({
        queryKey: kind === 'settlement' ? queryKeys.settlements : queryKeys.businessPayments,
      });
      setDone((d) => ({
        n: (d?.n ?? 0) + 1,
        text: `Recorded ${formatMoney(receipt.amount, receipt.currency)} (${receipt.reference}). The balance is now ${formatMoney(receipt.balance, receipt.currency)}.`,
      }));
      setDraft(emptyDraft(draft.currency));
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const currency = draft.currency.trim().toUpperCase();
    const minor = toMinorUnits(draft.amount, currency);
    if (minor === undefined) {
      setInvalid(`Amount must be a positive amount in ${currency} with at most the currency's decimals`);
      return;
    }
    setInvalid(null);
    record.mutate({ ...draft, partyId: draft.partyId.trim(), currency, minor });
  };
  const id = kind === 'settlement' ? 'settlement-heading' : 'payment-heading';
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{kind === 'settlement' ? 'Settlement: cash a driver handed in' : 'Business payment'}</h2>
      <form ref={formRef} onSubmit={submit} aria-labelledby={id}>
        <Field
          label={kind === 'settlement' ? 'Driver ID' : 'Business ID'}
          required
          value={draft.partyId}
          onChange={(e) => setDraft({ ...draft, partyId: e.target.value })}
        />
        <Field
          label="Amount"
          inputMode="decimal"
          required
          value={draft.amount}
          hint="In major units, e.g. 70.00"
          onChange={(e) => setDraft({ ...draft, amount: e.target.value })}
        />
        <Field
          label="Currency"
          required
          maxLength={3}
          value={draft.currency}
          onChange={(e) => setDraft({ ...draft, currency: e.target.value })}
        />
        <Field
          label="Reference"
          required
          maxLength={100}
          value={draft.reference}
          hint={kind === 'settlement' ? 'The receipt number' : 'The bank transfer reference'}
          onChange={(e) => setDraft({ ...draft, reference: e.target.value })}
        />
        <BusyButton type="submit" busy={record.isPending}>
          {label}
        </BusyButton>
      </form>
      {invalid && (
        <p className="error" role="alert">
          {invalid}
        </p>
      )}
      <ErrorBox error={record.error} />
      {done && <FocusNotice key={done.n}>{done.text}</FocusNotice>}
    </section>
  );
}

export function BalancesPage() {
  const { cursors, setCursors, cursor } = useCursors();
  const { filter, field: currencyFilter } = useCurrencyFilter(() => setCursors([]));
  const list = useQuery({
    queryKey: queryKeys.balancesPage(filter, cursor),
    queryFn: () =>
      ok(
        api.GET('/api/admin/balances', {
          params: { query: { limit: 50, ...(filter ? { currency: filter } : {}), ...(cursor ? { cursor } : {}) } },
        }),
      ),
  });
  const [settlement, setSettlement] = useState<Draft>(emptyDraft());
  const [payment, setPayment] = useState<Draft>(emptyDraft());
  const settlementForm = useRef<HTMLFormElement>(null);
  const paymentForm = useRef<HTMLFormElement>(null);
  /** A row's button fills the form and moves the focus to its amount. */
  const fill = (kind: Kind, partyId: string, currency: string, amount: number) => {
    const draft = { ...emptyDraft(currency), partyId, amount: amount > 0 ? toMajorText(amount, currency) : '' };
    if (kind === 'settlement') setSettlement(draft);
    else setPayment(draft);
    const form = (kind === 'settlement' ? settlementForm : paymentForm).current;
    setTimeout(() => form?.querySelectorAll('input')[1]?.focus(), 0);
  };
  return (
    <>
      <PageTitle>Balances</PageTitle>
      <p className="hint">
        What the operator owes each account, in its currency. Negative: the party owes the operator (a driver's cash, a
        business's invoices).
      </p>
      {currencyFilter}
      <ErrorBox error={list.error} />
      {list.isPending && <p role="status">Loading…</p>}
      {list.data && list.data.items.length === 0 && <p>Every balance is zero.</p>}
      {list.data && list.data.items.length > 0 && (
        <table>
          <caption className="sr-only">Non-zero balances, newest account first</caption>
          <thead>
            <tr>
              <th scope="col">Account</th>
              <th scope="col">Name</th>
              <th scope="col">Balance</th>
              <th scope="col">Action</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((b) => (
              <tr key={b.accountId}>
                <td>{KIND_LABEL[b.partyKind] ?? b.partyKind}</td>
                <td>
                  {b.partyKind === 'DRIVER' && b.partyId ? (
                    <Link to={`/drivers/${b.partyId}/earnings`}>{b.name ?? 'Driver'}</Link>
                  ) : (
                    (b.name ?? '—')
                  )}
                </td>
                <td className={b.balance < 0 ? 'negative' : undefined}>{formatMoney(b.balance, b.currency)}</td>
                <td>
                  {b.partyKind === 'DRIVER' && b.partyId && b.balance < 0 && (
                    <button
                      type="button"
                      className="secondary"
                      aria-label={`Settle ${b.name ?? 'driver'}`}
                      onClick={() => fill('settlement', b.partyId!, b.currency, -b.balance)}
                    >
                      Settle
                    </button>
                  )}
                  {b.partyKind === 'BUSINESS' && b.partyId && (
                    <button
                      type="button"
                      className="secondary"
                      aria-label={`Record a payment by ${b.name ?? 'business'}`}
                      onClick={() => fill('payment', b.partyId!, b.currency, b.balance < 0 ? -b.balance : 0)}
                    >
                      Payment
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager
        next={list.data?.nextCursor}
        cursors={cursors}
        setCursors={setCursors}
        back="previous"
        label="Balances: pages"
      />
      <div className="columns">
        <ReceiptForm kind="settlement" draft={settlement} setDraft={setSettlement} formRef={settlementForm} />
        <ReceiptForm kind="payment" draft={payment} setDraft={setPayment} formRef={paymentForm} />
      </div>
      <RecentSettlements />
      <RecentBusinessPayments />
    </>
  );
}
