// In-process events, fanned out to every instance through Redis pub/sub when Redis is configured
// (sharded pub/sub on a Redis Cluster: one channel, on the primary that owns its slot).
// Handlers run on the instance that published at once, and on the others when Redis delivers.
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { publish, subscribe, type RedisHealth, type Subscription } from './redis.js';

const MAX_PENDING = 10_000;

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
  'driver.location': {
    driverId: string;
    lat: number;
    lng: number;
    heading: number | null;
    speed: number | null;
    at: number;
  };
  /** A message for a driver's WebSocket, wherever it is connected. */
  'driver.push': { driverId: string; message: Record<string, unknown> };
  /** New work may be available for the webhook worker. */
  'webhooks.wake': Record<string, never>;
  /** A tariff changed (instances drop their cached copy) or a new surge state was shared (instances read it). */
  'pricing.changed': { what: 'tariff' | 'surge' };
  /**
   * A package or ride changed status (after commit). Every instance reacts for itself: caches drop
   * their copy, the driver index and the driver's WebSocket hear of it (driver.job, driver.push).
   */
  'job.changed': {
    jobType: 'PACKAGE' | 'RIDE';
    jobId: string;
    status: string;
    driverId: string | null;
    actorId: string | null;
    /** The driver was just given the job (it is busy now). */
    assigned: boolean;
    /** The job ended (its driver is free). */
    final: boolean;
    /** The driver handed the job back (it waits again; the driver is free). */
    released?: boolean;
  };
  /** A driver made a device key (Traccar Client): every instance adds it to its set of live keys (`tag`: the start of its hash). */
  'device-key.created': { keyId: string; tag: string };
  /** A driver revoked a device key (Traccar Client): every instance drops its cached lookup and its tag. */
  'device-key.revoked': { keyId: string; tag?: string };
  /** A job got a tip or a rating (contract section 20): caches drop their copy. */
  'job.annotated': { jobType: 'PACKAGE' | 'RIDE'; jobId: string };
  /** A package's tracking link was replaced: the old one's streams end, caches drop the package. */
  'tracking.rotated': { packageId: string };
  /** A package's proof of delivery was uploaded (or replaced): caches drop the package. */
  'package.proof': { packageId: string };
  /**
   * An alert was raised or changed state (contract section 23): every instance tells its account
   * streams (`event: alert`) that may see it (admins; the business; the driver's company).
   */
  'alert.changed': {
    alert: Record<string, unknown>;
    businessId: string | null;
    driverCompanyId: string | null;
  };
  /**
   * This instance only: Redis (or this instance's subscription) is back after an outage, so events
   * published meanwhile may have been missed. Whoever keeps state from events reloads it from the
   * database (the truth they follow).
   */
  'bus.resync': Record<string, never>;
}
export type Topic = keyof BusEvents;
type Handler<T extends Topic> = (payload: BusEvents[T]) => void;

export interface Bus {
  publish<T extends Topic>(topic: T, payload: BusEvents[T]): void;
  /** Delivers to the other instances only: for a change this instance has already applied itself. */
  publishToOthers<T extends Topic>(topic: T, payload: BusEvents[T]): void;
  /** Delivers to this instance only: for a reaction every instance makes to an event all of them got. */
  publishHere<T extends Topic>(topic: T, payload: BusEvents[T]): void;
  subscribe<T extends Topic>(topic: T, handler: Handler<T>): () => void;
  /** Whether invalidations from every instance are being delivered (see RedisBus). */
  readonly reliable: boolean;
  close(): Promise<void>;
}

export class LocalBus implements Bus {
  protected readonly emitter = new EventEmitter();
  constructor(protected readonly logger?: Logger) {
    this.emitter.setMaxListeners(0);
  }
  /** In one process nothing can be missed. */
  get reliable(): boolean {
    return true;
  }
  publish<T extends Topic>(topic: T, payload: BusEvents[T]): void {
    this.deliver(topic, payload);
  }
  publishHere<T extends Topic>(topic: T, payload: BusEvents[T]): void {
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
  private subscription: Subscription | undefined;
  /** Messages for the other instances that Redis did not take: sent again when it is back. */
  private pending: string[] = [];
  private dropped = 0;
  private unwatch: (() => void) | undefined;
  private readonly offChange: () => void;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly health: RedisHealth,
    logger?: Logger,
  ) {
    super(logger);
    this.channel = `${prefix}bus`;
    // Back after an outage: events published meanwhile may have been missed (ours, sent again, and
    // the others'). Whoever keeps state from events reloads it from the database.
    this.offChange = health.onChange((up) => {
      if (!up) return;
      this.resend();
      this.deliver('bus.resync', {});
    });
  }

  /** Connects and subscribes (again after each reconnection or failover, see subscribe()). */
  async ready(): Promise<void> {
    if (this.subscription) return;
    const subscription = await subscribe(this.redis, this.channel, (raw) => this.receive(raw));
    this.subscription = subscription;
    this.unwatch = this.health.watch('bus', subscription.connection, () => subscription.check());
  }

  private receive(raw: string): void {
    try {
      const { from, topic, payload } = JSON.parse(raw) as { from: string; topic: string; payload: unknown };
      if (from !== this.instanceId) this.deliver(topic, payload);
    } catch (err) {
      this.logger?.warn({ err }, 'bad bus message');
    }
  }

  /**
   * Whether every invalidation published by any instance reaches this one: false while Redis or this
   * subscription is down, and until the subscription has answered a heartbeat after coming back.
   * Caches that rely on invalidations serve only very recent entries meanwhile.
   */
  get reliable(): boolean {
    return this.health.up;
  }

  publish<T extends Topic>(topic: T, payload: BusEvents[T]): void {
    this.deliver(topic, payload);
    this.publishToOthers(topic, payload);
  }

  publishToOthers<T extends Topic>(topic: T, payload: BusEvents[T]): void {
    const raw = JSON.stringify({ from: this.instanceId, topic, payload });
    // A push is for a socket now: late, it would mislead; every other event only tells to reload.
    const keep = topic !== 'driver.push';
    if (!this.health.up) {
      if (keep) this.queue(raw);
      return;
    }
    publish(this.redis, this.channel, raw).catch((err) => {
      this.health.failure('bus publish', err);
      if (keep) this.queue(raw);
    });
  }

  private queue(raw: string): void {
    if (this.pending.length >= MAX_PENDING) {
      this.pending.shift();
      this.dropped += 1;
    }
    this.pending.push(raw);
  }

  private resend(): void {
    if (this.dropped)
      this.logger?.warn(
        { dropped: this.dropped },
        'bus events dropped during the redis outage (others resynchronise anyway)',
      );
    this.dropped = 0;
    const batch = this.pending;
    this.pending = [];
    for (const raw of batch) {
      publish(this.redis, this.channel, raw).catch((err) => {
        this.health.failure('bus publish', err);
        this.queue(raw);
      });
    }
  }

  async close(): Promise<void> {
    this.offChange();
    this.unwatch?.();
    await super.close();
    this.subscription?.close();
  }
}
