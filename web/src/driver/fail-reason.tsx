// The "Failed" step's reason (contract section 23): a code chosen from a list of large radio buttons,
// plus optional free text. The server keeps both; text alone would mean OTHER, so a code is required here.
import type { Package } from './types';

export type FailReasonCode = NonNullable<Package['reasonCode']>;

export const FAIL_REASONS: { code: FailReasonCode; label: string }[] = [
  { code: 'NO_ANSWER', label: 'No answer' },
  { code: 'ADDRESS_NOT_FOUND', label: 'Address not found' },
  { code: 'REFUSED', label: 'Refused' },
  { code: 'CLOSED', label: 'Closed' },
  { code: 'DAMAGED', label: 'Damaged' },
  { code: 'UNSAFE', label: 'Unsafe' },
  { code: 'OTHER', label: 'Other' },
];

export function FailReasonChoice({
  value,
  onChange,
}: {
  value: FailReasonCode | undefined;
  onChange: (code: FailReasonCode) => void;
}) {
  return (
    <fieldset className="fail-reasons">
      <legend>What went wrong?</legend>
      {FAIL_REASONS.map((r) => (
        <label key={r.code} className="choice">
          <input
            type="radio"
            name="reasonCode"
            value={r.code}
            required
            checked={value === r.code}
            onChange={() => onChange(r.code)}
          />
          {r.label}
        </label>
      ))}
    </fieldset>
  );
}
