// Endpoint management for businesses: ownership, the per-business limit, URL rules, secrets, the log.
import { randomUUID } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import type { DB } from '../../db/database.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import { decodeCursor, toPage } from '../../shared/pagination.js';
import { DELIVERY_EVENTS, webhookPayload } from './outbox.js';
import { generateSecret } from './webhook-signature.js';
import { WebhooksRepository, type DeliveryRow, type EndpointRow } from './webhooks.repository.js';
import {
  MAX_ENDPOINTS_PER_BUSINESS,
  type CreateEndpointBody,
  type DeliveriesQuery,
  type UpdateEndpointBody,
} from './webhooks.schemas.js';
import { checkWebhookUrl, type LookupAll, type UrlRules } from './url-safety.js';

export const TEST_EVENT = 'webhook.test';

const defaultLookup: LookupAll = (hostname) => lookup(hostname, { all: true, verbatim: true });

export function toEndpointResponse(row: EndpointRow) {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    description: row.description,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export function toDeliveryResponse(row: DeliveryRow) {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    event: row.event,
    deliveryId: row.delivery_id,
    status: row.status,
    attempts: row.attempts,
    lastResponseStatus: row.last_response_status,
    lastError: row.last_error,
    lastAttemptAt: row.last_attempt_at?.toISOString() ?? null,
    nextAttemptAt: row.status === 'PENDING' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    createdAt: row.created_at.toISOString(),
  };
}

export class WebhooksService {
  private readonly repo: WebhooksRepository;
  private readonly lookupAll: LookupAll;

  constructor(
    private readonly deps: {
      db: DB;
      repo: WebhooksRepository;
      clock: Clock;
      bus: Bus;
      urlRules: UrlRules;
      lookupAll?: LookupAll;
    },
  ) {
    this.repo = deps.repo;
    this.lookupAll = deps.lookupAll ?? defaultLookup;
  }

  private async validUrl(url: string): Promise<string> {
    const problem = await checkWebhookUrl(url, this.deps.urlRules, this.lookupAll);
    if (problem) throw badRequest(problem, 'INVALID_WEBHOOK_URL');
    return new URL(url).toString();
  }

  private async owned(businessId: string, id: string): Promise<EndpointRow> {
    const row = await this.repo.getEndpoint(businessId, id);
    if (!row) throw notFound('Webhook endpoint not found', 'WEBHOOK_NOT_FOUND');
    return row;
  }

  async createEndpoint(businessId: string, body: CreateEndpointBody) {
    const url = await this.validUrl(body.url);
    const now = this.deps.clock.now();
    const row: EndpointRow = {
      id: randomUUID(),
      business_id: businessId,
      url,
      events: body.events ?? [...DELIVERY_EVENTS],
      enabled: true,
      disabled_reason: null,
      description: body.description ?? null,
      secret: generateSecret(),
      created_at: now,
      updated_at: now,
    };
    await this.deps.db.transaction().execute(async (trx) => {
      await this.repo.lockBusiness(trx, businessId);
      if ((await this.repo.countEndpoints(trx, businessId)) >= MAX_ENDPOINTS_PER_BUSINESS) {
        throw conflict(
          `A business can have at most ${MAX_ENDPOINTS_PER_BUSINESS} webhook endpoints`,
          'WEBHOOK_LIMIT_REACHED',
        );
      }
      await this.repo.insertEndpoint(trx, row);
    });
    return { ...toEndpointResponse(row), secret: row.secret };
  }

  async listEndpoints(businessId: string, query: { limit?: number; cursor?: string }) {
    const limit = query.limit ?? 20;
    const rows = await this.repo.listEndpoints(businessId, limit, decodeCursor(query.cursor));
    return toPage(
      rows.map((r) => ({ ...r, createdAt: r.created_at })),
      limit,
      toEndpointResponse,
    );
  }

  async getEndpoint(businessId: string, id: string) {
    return toEndpointResponse(await this.owned(businessId, id));
  }

  async updateEndpoint(businessId: string, id: string, body: UpdateEndpointBody) {
    await this.owned(businessId, id);
    const changes: Partial<EndpointRow> = { updated_at: this.deps.clock.now() };
    if (body.url !== undefined) changes.url = await this.validUrl(body.url);
    if (body.events !== undefined) changes.events = body.events;
    if (body.description !== undefined) changes.description = body.description;
    if (body.enabled !== undefined) {
      changes.enabled = body.enabled;
      changes.disabled_reason = body.enabled ? null : 'DISABLED_BY_USER';
    }
    const row = await this.repo.updateEndpoint(businessId, id, changes);
    if (!row) throw notFound('Webhook endpoint not found', 'WEBHOOK_NOT_FOUND');
    // Deliveries held while the endpoint was disabled can go now.
    if (body.enabled) this.deps.bus.publish('webhooks.wake', {});
    return toEndpointResponse(row);
  }

  async deleteEndpoint(businessId: string, id: string): Promise<void> {
    if (!(await this.repo.deleteEndpoint(businessId, id)))
      throw notFound('Webhook endpoint not found', 'WEBHOOK_NOT_FOUND');
  }

  async rotateSecret(businessId: string, id: string) {
    const secret = generateSecret();
    // The update is scoped to the business: no row means someone else's (or no) endpoint.
    if (!(await this.repo.updateEndpoint(businessId, id, { secret, updated_at: this.deps.clock.now() }))) {
      throw notFound('Webhook endpoint not found', 'WEBHOOK_NOT_FOUND');
    }
    return { secret };
  }

  async listDeliveries(businessId: string, id: string, query: DeliveriesQuery) {
    await this.owned(businessId, id);
    const limit = query.limit ?? 20;
    const rows = await this.repo.listDeliveries(id, limit, decodeCursor(query.cursor), query.status);
    return toPage(
      rows.map((r) => ({ ...r, createdAt: r.created_at })),
      limit,
      toDeliveryResponse,
    );
  }

  async retryDelivery(businessId: string, deliveryId: string) {
    const delivery = await this.repo.getDelivery(businessId, deliveryId);
    if (!delivery) throw notFound('Webhook delivery not found', 'WEBHOOK_DELIVERY_NOT_FOUND');
    if (!delivery.endpoint_enabled) throw conflict('Webhook endpoint is disabled', 'WEBHOOK_DISABLED');
    const row = await this.repo.requeueDelivery(deliveryId, this.deps.clock.now());
    if (!row) throw conflict('Webhook delivery is already pending', 'WEBHOOK_DELIVERY_PENDING');
    this.deps.bus.publish('webhooks.wake', {});
    return toDeliveryResponse(row);
  }

  async sendTest(businessId: string, id: string) {
    const endpoint = await this.owned(businessId, id);
    if (!endpoint.enabled) throw conflict('Webhook endpoint is disabled', 'WEBHOOK_DISABLED');
    const now = this.deps.clock.now();
    const deliveryId = randomUUID();
    const row = await this.repo.insertDelivery({
      id: randomUUID(),
      endpoint_id: id,
      event: TEST_EVENT,
      delivery_id: deliveryId,
      payload: webhookPayload(TEST_EVENT, deliveryId, 'TEST', now),
      now,
    });
    this.deps.bus.publish('webhooks.wake', {});
    return toDeliveryResponse(row);
  }
}
