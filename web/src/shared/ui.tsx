// Shared pieces: labelled fields, the error box, page headings that take focus on navigation, and the
// keyboard's helpers: a busy button that keeps the focus, an outcome that takes it, a focus handed over.
import {
  useEffect,
  useId,
  useRef,
  type ComponentProps,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
} from 'react';
import { errorText } from './api/errors';
import { formatMoney } from './money';

export function Field({
  label,
  hint,
  ...input
}: { label: string; hint?: string } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      {hint && (
        <small id={`${id}-hint`} className="hint">
          {hint}
        </small>
      )}
    </div>
  );
}

export function SelectField({
  label,
  children,
  ...select
}: { label: string; children: ReactNode } & SelectHTMLAttributes<HTMLSelectElement>) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} {...select}>
        {children}
      </select>
    </div>
  );
}

/**
 * A button that is busy while its request runs: `aria-disabled`, and pressing it again does nothing
 * (nor does Enter in its form), but it stays focusable. With `disabled` Chromium sends the focus of
 * the pressed button to the body, and a keyboard user would start again from the top of the page.
 * `disabled` stays for a button that cannot be used yet (nothing chosen).
 */
export function BusyButton({ busy, onClick, ...button }: { busy: boolean } & ComponentProps<'button'>) {
  return (
    <button
      {...button}
      aria-disabled={busy || undefined}
      onClick={(event) => {
        if (busy) event.preventDefault();
        else onClick?.(event);
      }}
    />
  );
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {errorText(error)}
    </p>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

/**
 * The outcome of an action that took away the control the user was on (an approved row, a cancelled
 * delivery's form): the message takes the focus, so that a keyboard user is not sent back to the top
 * of the page and a screen reader reads what happened. Give it a new `key` for each new outcome.
 */
export function FocusNotice({ children }: { children: ReactNode }) {
  const ref = useRef<HTMLParagraphElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <p ref={ref} className="notice" role="status" tabIndex={-1}>
      {children}
    </p>
  );
}

/**
 * For a control that replaces itself (a confirmation closed, an edit form saved): `focusAfterRender(() =>
 * ref.current)` moves the focus to the element that stands in its place once React has drawn it,
 * instead of letting it fall back to the page's body.
 */
export function useFocusAfterRender(): (target: () => HTMLElement | null) => void {
  const pending = useRef<(() => HTMLElement | null) | null>(null);
  useEffect(() => {
    const target = pending.current;
    if (!target) return;
    pending.current = null;
    target()?.focus();
  });
  return (target) => {
    pending.current = target;
  };
}

let appName = 'Delivery console';

/** The app's name after each page's title in the document's title ("Deliveries · Delivery console"). */
export function setAppName(name: string) {
  appName = name;
}

/** The page's h1, focused on navigation so that screen readers and keyboard users start there. */
export function PageTitle({ children }: { children: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    ref.current?.focus();
    document.title = `${ref.current?.textContent ?? ''} · ${appName}`;
  }, []);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
}

/** A job's status history, oldest first: each status with its time and reason. */
export function Timeline({ history }: { history: { status: string; at: string; reason?: string }[] }) {
  return (
    <ol className="timeline">
      {history.map((h, i) => (
        <li key={i}>
          <StatusBadge status={h.status} /> <time dateTime={h.at}>{formatTime(h.at)}</time>
          {h.reason ? ` — ${h.reason}` : ''}
        </li>
      ))}
    </ol>
  );
}

export function formatTime(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—';
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status.toLowerCase()}`}>{status.replace(/_/g, ' ')}</span>;
}

export const VEHICLE_TYPES = ['BIKE', 'CAR', 'VAN', 'TRUCK'] as const;
export const PACKAGE_STATUSES = [
  'PENDING',
  'ASSIGNED',
  'PICKED_UP',
  'IN_TRANSIT',
  'DELIVERED',
  'FAILED',
  'CANCELLED',
] as const;

/** "KES 174.30" from 17430, with ISO 4217's decimals (./money.ts, the server's table; not the browser's). */
export { formatMoney };

export function Money({ money }: { money: { amount: number; currency: string } | null | undefined }) {
  return <>{money ? formatMoney(money.amount, money.currency) : '—'}</>;
}
