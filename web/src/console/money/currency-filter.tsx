// The money pages' currency filter: typed in capitals; three characters go to the API as `currency`
// (one it refuses shows the API's message), fewer mean no filter yet.
import { Field } from '../../shared/ui';

/** The `currency` to ask the API for: the field's text once it has three characters, else none. */
export const currencyFilterValue = (text: string): string => (text.length === 3 ? text : '');

export function CurrencyFilter({ value, onChange }: { value: string; onChange: (currency: string) => void }) {
  return (
    <div className="toolbar">
      <Field label="Filter by currency" placeholder="All" maxLength={3} value={value} onChange={(e) => onChange(e.target.value.toUpperCase())} />
    </div>
  );
}
