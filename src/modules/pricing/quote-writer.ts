// The record of each quote in `quotes`, written behind the answer: a quote's id carries the quote
// itself (quote-token.ts), so nothing waits for this write. Records are gathered for up to
// FLUSH_MS (or FLUSH_ROWS of them) and written in one INSERT … ON CONFLICT DO NOTHING (a quote already
// used has its row from the job's transaction) whose one parameter is the rows as JSON: serialising
// them is one native JSON.stringify, where a VALUES list of 17 parameters a row took the event loop
// for milliseconds at a time. A failed statement is retried row by
// row when the database refused a row (a foreign key: the account was deleted meanwhile), and dropped
// with one warning when the database is away; at most MAX_QUEUED records wait (queued or in
// flight), new ones dropped beyond that. A lost record loses nothing a customer holds: the quote still works.
import { sql, type Insertable, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../db/schema.js';
import type { QuotesTable } from '../../db/tables/pricing.js';

/** Rows per statement. */
const MAX_ROWS = 1000;
const FLUSH_MS = 200;
const FLUSH_ROWS = 500;
const MAX_QUEUED = 50_000;

/** A row of `quotes` as the writer takes it: the jsonb columns as values, not as JSON text. */
export type QuoteRecord = Omit<Insertable<QuotesTable>, 'breakdown' | 'inputs'> & { breakdown: object; inputs: object };

export interface QuoteWriterOptions {
  flushMs?: number;
  maxQueued?: number;
}

export class QuoteWriter {
  private queue: QuoteRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private inFlightRows = 0;
  private readonly flushMs: number;
  private readonly maxQueued: number;
  /** Records not written since the last warning (logged once per failing stretch). */
  private dropped = 0;
  /** Counters, for tests and metrics. */
  readonly stats = { written: 0, dropped: 0 };

  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: Logger,
    options: QuoteWriterOptions = {},
  ) {
    this.flushMs = options.flushMs ?? FLUSH_MS;
    this.maxQueued = options.maxQueued ?? MAX_QUEUED;
  }

  /** Queues the record; never waits and never throws. */
  record(row: QuoteRecord): void {
    if (this.queue.length + this.inFlightRows >= this.maxQueued) {
      this.drop(1, 'too many quote records waiting for the database');
      return;
    }
    this.queue.push(row);
    if (this.queue.length >= FLUSH_ROWS) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    for (let i = 0; i < batch.length; i += MAX_ROWS) {
      const rows = batch.slice(i, i + MAX_ROWS);
      this.inFlightRows += rows.length;
      const write = this.write(rows).finally(() => {
        this.inFlightRows -= rows.length;
        this.inFlight.delete(write);
      });
      this.inFlight.add(write);
    }
  }

  private async write(rows: QuoteRecord[]): Promise<void> {
    try {
      await this.insert(rows);
      this.written(rows.length);
      return;
    } catch (err) {
      // Class 23: the database refused a row (integrity constraint); anything else (the connection) fails them all.
      if (rows.length === 1 || !String((err as { code?: unknown }).code ?? '').startsWith('23')) {
        this.drop(rows.length, (err as Error).message);
        return;
      }
    }
    for (const row of rows) {
      try {
        await this.insert([row]);
        this.written(1);
      } catch (err) {
        this.drop(1, (err as Error).message);
      }
    }
  }

  private insert(rows: QuoteRecord[]) {
    return sql`insert into quotes select * from json_populate_recordset(null::quotes, ${JSON.stringify(rows)}::json) on conflict (id) do nothing`.execute(this.db);
  }

  private written(count: number): void {
    this.stats.written += count;
    if (this.dropped > 0) {
      this.logger.info({ dropped: this.dropped }, 'quote records are written again');
      this.dropped = 0;
    }
  }

  private drop(count: number, reason: string): void {
    this.stats.dropped += count;
    if (this.dropped === 0) this.logger.warn({ err: reason, rows: count }, 'quote records not written (the quotes stay valid)');
    this.dropped += count;
  }

  /** Writes what is queued and waits for every write in flight (when stopping). */
  async drain(): Promise<void> {
    if (this.queue.length) this.flush();
    await Promise.all([...this.inFlight]);
  }
}
