// The money pages' currency filter: typed in capitals; three characters go to the API as `currency`
// (one it refuses shows the API's message), fewer mean no filter yet.
import { useState } from 'react';
import { Field } from '../../shared/ui';

/**
 * The filter's field and the `currency` to ask the API for ('' for none). `onChange` runs on every
 * edit (a page's pager starts again).
 */
export function useCurrencyFilter(onChange: () => void) {
  const [text, setText] = useState('');
  const field = (
    <div className="toolbar">
      <Field
        label="Filter by currency"
        placeholder="All"
        maxLength={3}
        value={text}
        onChange={(e) => {
          setText(e.target.value.toUpperCase());
          onChange();
        }}
      />
    </div>
  );
  return { filter: text.length === 3 ? text : '', field };
}
