// The money pages' currency filter: three letters, typed in capitals; fewer mean no filter yet.
import { Field } from '../../shared/ui';

export function CurrencyFilter({ value, onChange }: { value: string; onChange: (currency: string) => void }) {
  return (
    <div className="toolbar">
      <Field label="Currency" placeholder="All" maxLength={3} value={value} onChange={(e) => onChange(e.target.value.toUpperCase())} />
    </div>
  );
}
