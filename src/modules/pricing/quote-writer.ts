// Quotes are written in groups with at most one INSERT in flight: the quotes made while a group is
// being written wait for it and go together in the next statement (group commit), so the number of
// statements a second falls as the load rises instead of growing with it. Each request waits for
// its group's commit before it answers (a quote that was answered can be used at once, from any
// instance). The commit does not wait for the WAL to reach the disk (synchronous_commit off for this
// transaction only): the rows are visible to every session at once, and a PostgreSQL crash can lose
// at most the last fraction of a second of quotes, whose holders are asked to quote again (404).
import { sql, type Insertable, type Kysely } from 'kysely';
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
  private writing: Promise<void> | undefined;
  private scheduled = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly logger: Logger,
  ) {}

  insert(row: Insertable<QuotesTable>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      this.schedule();
    });
  }

  /** The next group goes at the end of this event-loop turn, unless one is being written. */
  private schedule(): void {
    if (this.scheduled || this.writing || !this.queue.length) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.writing || !this.queue.length) return;
    const group = this.queue.splice(0, MAX_ROWS);
    this.writing = this.write(group).finally(() => {
      this.writing = undefined;
      this.schedule();
    });
  }

  private async write(group: Waiting[]): Promise<void> {
    try {
      await this.db.transaction().execute(async (trx) => {
        await sql`set local synchronous_commit = off`.execute(trx);
        await trx
          .insertInto('quotes')
          .values(group.map((w) => w.row))
          .execute();
      });
      for (const w of group) w.resolve();
    } catch (err) {
      this.logger.error({ err: (err as Error).message, rows: group.length }, 'writing quotes failed');
      for (const w of group) w.reject(err);
    }
  }

  /** Waits for the quotes already taken in (when stopping). */
  async drain(): Promise<void> {
    while (this.writing || this.queue.length) {
      if (!this.writing) this.flush();
      await this.writing;
    }
  }
}
