// Counts every statement one piece of work sends to the database, BEGIN and COMMIT included: pg's
// Client.prototype.query (what a pooled client checked out for a Kysely transaction, the pool's own
// query and the prepared reads all end in) and PGlite's query and exec (what the embedded dialect
// sends). A statement counts when it is sent from the work's async context (AsyncLocalStorage), so
// background work (timers, sweeps, another request) is never counted, and only until the work's
// answer: what runs after it (after-commit work, continuing in the same context) is not.
import { AsyncLocalStorage } from 'node:async_hooks';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

interface Window {
  texts: string[];
  open: boolean;
}

const windows = new AsyncLocalStorage<Window>();
let installed = false;

function textOf(args: unknown[]): string {
  const first = args[0] as unknown;
  const text =
    typeof first === 'string'
      ? first
      : first && typeof first === 'object' && 'text' in first
        ? String((first as { text: unknown }).text)
        : String(first);
  return text.replace(/\s+/g, ' ').trim().slice(0, 120);
}

function wrap(proto: Record<string, unknown>, method: string): void {
  const original = proto[method] as (...args: unknown[]) => unknown;
  proto[method] = function (this: unknown, ...args: unknown[]) {
    const window = windows.getStore();
    if (window?.open) window.texts.push(textOf(args));
    return original.apply(this, args);
  };
}

/** Wraps the drivers' query methods (idempotent). Call before the test's database opens. */
export function installStatementCounter(): void {
  if (installed) return;
  installed = true;
  wrap(pg.Client.prototype as unknown as Record<string, unknown>, 'query');
  wrap(PGlite.prototype as unknown as Record<string, unknown>, 'query');
  wrap(PGlite.prototype as unknown as Record<string, unknown>, 'exec');
}

/** Runs `work` and returns its result with the statements it sent until it resolved (their first 120 characters). */
export async function countStatements<T>(work: () => Promise<T>): Promise<{ result: T; texts: string[] }> {
  if (!installed) throw new Error('installStatementCounter() first');
  const window: Window = { texts: [], open: true };
  try {
    const result = await windows.run(window, work);
    return { result, texts: [...window.texts] };
  } finally {
    window.open = false;
  }
}
