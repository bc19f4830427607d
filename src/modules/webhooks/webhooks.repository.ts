// Kysely queries of the webhooks module: endpoints and the delivery log.
import type { Selectable } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import { beforeCursor, type Cursor } from '../../shared/pagination.js';
import type { DeliveryStatus, WebhookDeliveriesTable, WebhookEndpointsTable } from '../../db/tables/webhooks.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type DeliveryRow = Omit<Selectable<WebhookDeliveriesTable>, 'payload' | 'locked_by' | 'seq'>;

const DELIVERY_COLUMNS = [
  'id',
  'endpoint_id',
  'event',
  'delivery_id',
  'status',
  'attempts',
  'attempt_base',
  'next_attempt_at',
  'locked_until',
  'last_attempt_at',
  'last_response_status',
  'last_error',
  'completed_at',
  'created_at',
] as const;

export class WebhooksRepository {
  constructor(private readonly db: DB) {}

  getEndpoint(businessId: string, id: string): Promise<EndpointRow | undefined> {
    return this.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .where('business_id', '=', businessId)
      .executeTakeFirst();
  }

  async countEndpoints(trx: Executor, businessId: string): Promise<number> {
    const row = await trx
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('business_id', '=', businessId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Serializes endpoint creation per business (the per-business limit) on the business's user row. */
  async lockBusiness(trx: Executor, businessId: string): Promise<void> {
    await trx.selectFrom('users').select('id').where('id', '=', businessId).forUpdate().executeTakeFirst();
  }

  async insertEndpoint(trx: Executor, row: EndpointRow): Promise<void> {
    await trx.insertInto('webhook_endpoints').values(row).execute();
  }

  listEndpoints(businessId: string, limit: number, cursor: Cursor | undefined): Promise<EndpointRow[]> {
    let query = this.db.selectFrom('webhook_endpoints').selectAll().where('business_id', '=', businessId);
    if (cursor) query = query.where(beforeCursor(cursor, 'created_at', 'id'));
    return query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
  }

  async updateEndpoint(
    businessId: string,
    id: string,
    changes: Partial<EndpointRow>,
  ): Promise<EndpointRow | undefined> {
    return this.db
      .updateTable('webhook_endpoints')
      .set(changes)
      .where('id', '=', id)
      .where('business_id', '=', businessId)
      .returningAll()
      .executeTakeFirst();
  }

  async deleteEndpoint(businessId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('webhook_endpoints')
      .where('id', '=', id)
      .where('business_id', '=', businessId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  listDeliveries(
    endpointId: string,
    limit: number,
    cursor: Cursor | undefined,
    status: DeliveryStatus | undefined,
  ): Promise<DeliveryRow[]> {
    let query = this.db.selectFrom('webhook_deliveries').select(DELIVERY_COLUMNS).where('endpoint_id', '=', endpointId);
    if (status) query = query.where('status', '=', status);
    if (cursor) query = query.where(beforeCursor(cursor, 'created_at', 'id'));
    return query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
  }

  getDelivery(businessId: string, id: string): Promise<(DeliveryRow & { endpoint_enabled: boolean }) | undefined> {
    return this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select(DELIVERY_COLUMNS.map((c) => `d.${c}` as const))
      .select('e.enabled as endpoint_enabled')
      .where('d.id', '=', id)
      .where('e.business_id', '=', businessId)
      .executeTakeFirst();
  }

  /** Puts a finished delivery back in the queue with a fresh retry schedule (same row: same webhook-id). */
  requeueDelivery(id: string, now: Date): Promise<DeliveryRow | undefined> {
    return this.db
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        status: 'PENDING',
        attempt_base: eb.ref('attempts'),
        next_attempt_at: now,
        locked_until: null,
        locked_by: null,
        completed_at: null,
      }))
      .where('id', '=', id)
      .where('status', '<>', 'PENDING')
      .returning(DELIVERY_COLUMNS)
      .executeTakeFirst();
  }

  async insertDelivery(row: {
    id: string;
    endpoint_id: string;
    event: string;
    delivery_id: string;
    payload: string;
    now: Date;
  }): Promise<DeliveryRow> {
    return this.db
      .insertInto('webhook_deliveries')
      .values({
        id: row.id,
        endpoint_id: row.endpoint_id,
        event: row.event,
        delivery_id: row.delivery_id,
        payload: row.payload,
        status: 'PENDING',
        next_attempt_at: row.now,
        created_at: row.now,
      })
      .returning(DELIVERY_COLUMNS)
      .executeTakeFirstOrThrow();
  }
}
