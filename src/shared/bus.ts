// In-process events, fanned out to every instance through Redis pub/sub when Redis is configured.
// Handlers run on the instance that published at once, and on the others when Redis delivers.
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Topics and payloads every module may publish or subscribe to. */
export interface BusEvents {
  /** A session was revoked (logout); its access tokens stop working. */
  'session.revoked': { sessionId: string };
  /** Every session of a user was revoked, or its status/role changed (suspension, approval, ...). */
  'user.changed': { userId: string; status?: string };
  /** A driver profile changed (vehicle, service types, availability, company). */
  'driver.changed': { driverId: string };
  /** A driver took a job (busy) or its job ended (free). */
  'driver.job': { driverId: string; busy: boolean; jobId: string; jobType: 'PACKAGE' | 'RIDE' };
  /** A driver position (used by instances to keep their in-memory index current). */
  'driver.location': { driverId: string; lat: number; lng: number; heading: number | null; speed: number | null; at: number };
  /** A message for a driver's WebSocket, wherever it is connected. */
  'driver.push': { driverId: string; message: Record<string, unknown> };
  /** New work may be available for the webhook worker. */
  'webhooks.wake': Record<string, never>;
  /** A tariff changed (instances drop their cached copy) or a new surge state was shared (instances read it). */
  'pricing.changed': { what: 'tariff' | 'surge' };
  /** A package changed: instances drop their cached copy (GET /packages/:id read cache). */
  'package.changed': { packageId: string };
  /**
   * This instance only: its Redis subscriber reconnected, so events published meanwhile may have been
   * missed. Whoever keeps state from events reloads it from the database (the truth they follow).
   */
  'bus.resync': Record<string, never>;
}
export type Topic = keyof BusEvents;
type Handler<T extends Topic> = (payload: BusEvents[T]) => void;

export interface Bus {
  publish<T extends Topic>(topic: T, payload: BusEvents[T]): void;
  /** Delivers to the other instances only: for a change this instance has already applied itself. */
  publishToOthers<T extends Topic>(topic: T, payload: BusEvents[T]): void;
  subscribe<T extends Topic>(topic: T, handler: Handler<T>): () => void;
  close(): Promise<void>;
}

export class LocalBus implements Bus {
  protected readonly emitter = new EventEmitter();
  constructor(protected readonly logger?: Logger) {
    this.emitter.setMaxListeners(0);
  }
  publish<T extends Topic>(topic: T, payload: BusEvents[T]): void {
    this.deliver(topic, payload);
  }
  /** Without Redis there are no other instances. */
  publishToOthers<T extends Topic>(_topic: T, _payload: BusEvents[T]): void {}
  protected deliver(topic: string, payload: unknown): void {
    for (const listener of this.emitter.listeners(topic)) {
      try {
        (listener as (p: unknown) => void)(payload);
      } catch (err) {
        this.logger?.error({ err, topic }, 'bus handler failed');
      }
    }
  }
  subscribe<T extends Topic>(topic: T, handler: Handler<T>): () => void {
    this.emitter.on(topic, handler);
    return () => this.emitter.off(topic, handler);
  }
  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

export class RedisBus extends LocalBus {
  private readonly instanceId = randomUUID();
  private readonly channel: string;
  private readonly subscriber: Redis;

  constructor(private readonly redis: Redis, prefix: string, logger?: Logger) {
    super(logger);
    this.channel = `${prefix}bus`;
    this.subscriber = redis.duplicate();
    this.subscriber.on('error', (err) => logger?.warn({ err: err.message }, 'redis bus subscriber error'));
    void this.subscriber.subscribe(this.channel).catch((err) => logger?.error({ err }, 'redis bus subscribe failed'));
    // The first 'ready' is the start; a later one follows a lost connection (ioredis subscribes again).
    let connected = false;
    this.subscriber.on('ready', () => {
      if (connected) {
        logger?.warn('redis bus subscriber reconnected: events may have been missed; resynchronising');
        this.deliver('bus.resync', {});
      }
      connected = true;
    });
    this.subscriber.on('message', (_channel, raw: string) => {
      try {
        const { from, topic, payload } = JSON.parse(raw) as { from: string; topic: string; payload: unknown };
        if (from !== this.instanceId) this.deliver(topic, payload);
      } catch (err) {
        logger?.warn({ err }, 'bad bus message');
      }
    });
  }

  /** Resolves once the subscription is live (tests wait for it). */
  async ready(): Promise<void> {
    if (this.subscriber.status !== 'ready') await new Promise((resolve) => this.subscriber.once('ready', resolve));
    await this.subscriber.subscribe(this.channel);
  }

  publish<T extends Topic>(topic: T, payload: BusEvents[T]): void {
    this.deliver(topic, payload);
    this.publishToOthers(topic, payload);
  }

  publishToOthers<T extends Topic>(topic: T, payload: BusEvents[T]): void {
    this.redis
      .publish(this.channel, JSON.stringify({ from: this.instanceId, topic, payload }))
      .catch((err) => this.logger?.warn({ err: err.message, topic }, 'redis bus publish failed'));
  }

  async close(): Promise<void> {
    await super.close();
    this.subscriber.disconnect();
  }
}
