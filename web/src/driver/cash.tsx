// Cash on delivery in the driver app (contract section 21): the cash to collect, shown on the job
// before "Delivered", and the "Cash collected" the driver confirms with the delivery.
import { parseAmount } from '../shared/money';
import { Field, formatMoney } from '../shared/ui';
import type { Package } from './types';

/** "500.5" KES → 50050; undefined when it is not an amount with at most the currency's ISO 4217 decimals. */
export const toMinorUnits = parseAmount;

/** What the deliver request carries for a package with cash on delivery (nothing otherwise). */
export function cashCollectedBody(pkg: Package, text: string): { cashCollected?: number } {
  const cod = pkg.cashOnDelivery;
  if (!cod) return {};
  const amount = toMinorUnits(text, cod.currency);
  return amount === undefined ? {} : { cashCollected: amount };
}

export function CashToCollect({
  pkg,
  value,
  onChange,
}: {
  pkg: Package;
  value: string;
  onChange: (value: string) => void;
}) {
  const cod = pkg.cashOnDelivery;
  if (!cod) return null;
  return (
    <>
      <p className="cash-to-collect">
        Cash to collect: <strong>{formatMoney(cod.amount, cod.currency)}</strong>
      </p>
      <Field
        label="Cash collected"
        required
        inputMode="decimal"
        autoComplete="off"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        hint={`In ${cod.currency}: the whole amount, as collected from the recipient`}
      />
    </>
  );
}
