// The console's cursor pager under a paginated table: "First page" (or "Previous page") once past
// the first page, and "Next page" while the API gives a next cursor.
import { useState } from 'react';

/** The cursors of the pages visited after the first; the last is the page shown. */
export function useCursors() {
  const [cursors, setCursors] = useState<string[]>([]);
  return { cursors, setCursors, cursor: cursors[cursors.length - 1] };
}

export function Pager({
  next,
  cursors,
  setCursors,
  back = 'first',
  label = 'Pages',
}: {
  next: string | null | undefined;
  cursors: string[];
  setCursors: (c: string[]) => void;
  /** Whether the way back goes to the first page or one page back. */
  back?: 'first' | 'previous';
  /** The navigation's name: one per pager where a page has several. */
  label?: string;
}) {
  return (
    <nav aria-label={label} className="actions">
      {cursors.length > 0 && (
        <button
          type="button"
          className="secondary"
          onClick={() => setCursors(back === 'first' ? [] : cursors.slice(0, -1))}
        >
          {back === 'first' ? 'First page' : 'Previous page'}
        </button>
      )}
      {next && (
        <button type="button" className="secondary" onClick={() => setCursors([...cursors, next])}>
          Next page
        </button>
      )}
    </nav>
  );
}
