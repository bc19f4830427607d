// The log of SMS sent (contract section 27, GET /admin/sms).
import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../db/executor.js';
import type { SmsMessagesTable } from '../../db/tables/sms.js';
import { beforeCursor, type Cursor } from '../../shared/pagination.js';

export type SmsLogRow = Selectable<SmsMessagesTable>;

export class SmsLogRepository {
  constructor(private readonly db: Executor) {}

  async insert(row: Insertable<SmsMessagesTable>): Promise<void> {
    await this.db.insertInto('sms_messages').values(row).execute();
  }

  /** Newest first, `limit + 1` rows (the extra one says there is a next page). */
  list(query: { cursor?: Cursor; limit: number }): Promise<SmsLogRow[]> {
    let q = this.db
      .selectFrom('sms_messages')
      .select(['id', 'sent_at', 'recipient', 'template', 'locale', 'encoding', 'segments', 'status', 'text'])
      .orderBy('sent_at', 'desc')
      .orderBy('id', 'desc')
      .limit(query.limit + 1);
    if (query.cursor) q = q.where(beforeCursor(query.cursor, 'sent_at', 'id'));
    return q.execute();
  }
}
