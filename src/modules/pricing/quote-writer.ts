// Quotes are written in groups: every quote made during one turn of the event loop goes into one
// multi-row INSERT, and each request waits for its group's commit before it answers (a quote that
// was answered can be used at once, from any instance). At thousands of quotes a second this is a
// few statements a second instead of one per quote.
import type { Insertable, Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../db/schema.js';
import type { QuotesTable } from '../../db/tables/pricing.js';

/** Rows per statement (17 parameters each, well under PostgreSQL's 65,535). */
const MAX_ROWS = 1000;

interface Waiting {
  row: Insertable<QuotesTable>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class QuoteWriter {
  private queue: Waiting[] = [];
  private inFlight = new Set<Promise<void>>();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: Logger,
  ) {}

  insert(row: Insertable<QuotesTable>): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.queue.push({ row, resolve, reject }) === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    for (let i = 0; i < batch.length; i += MAX_ROWS) {
      const group = batch.slice(i, i + MAX_ROWS);
      const write = this.db
        .insertInto('quotes')
        .values(group.map((w) => w.row))
        .execute()
        .then(
          () => group.forEach((w) => w.resolve()),
          (err: unknown) => {
            this.logger.error({ err: (err as Error).message, rows: group.length }, 'writing quotes failed');
            group.forEach((w) => w.reject(err));
          },
        )
        .finally(() => this.inFlight.delete(write));
      this.inFlight.add(write);
    }
  }

  /** Waits for the quotes already taken in (when stopping). */
  async drain(): Promise<void> {
    if (this.queue.length) this.flush();
    await Promise.all([...this.inFlight]);
  }
}
