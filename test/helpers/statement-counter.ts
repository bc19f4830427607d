// Counts every statement sent to the database, BEGIN and COMMIT included: pg's Client.prototype.query
// (what a pooled client checked out for a Kysely transaction, the pool's own query and the prepared
// reads all end in) and PGlite's query and exec (what the embedded dialect sends). Installed once per
// process, before the first client connects; counting only while a window is open.
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

export interface StatementWindow {
  /** The statements' texts, in the order they were sent (the first 120 characters). */
  readonly texts: string[];
  stop(): string[];
}

let open: string[] | undefined;
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
    open?.push(textOf(args));
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

/** Starts counting: what is sent until `stop()` (one window at a time). */
export function countStatements(): StatementWindow {
  if (!installed) throw new Error('installStatementCounter() first');
  if (open) throw new Error('a statement window is already open');
  const texts: string[] = [];
  open = texts;
  return {
    texts,
    stop() {
      if (open === texts) open = undefined;
      return texts;
    },
  };
}
