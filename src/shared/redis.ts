// Redis connection settings (a single server or a Redis Cluster), pub/sub that works on both, and
// this instance's view of Redis: up or down, decided by a heartbeat on every connection it watches and
// by failed commands. It logs one line per change of state.
// ioredis is loaded on first use (`await import`), only when Redis is configured: an instance without
// Redis does not carry it (about 5 MB of the idle RSS, bench/RESULTS.md).
import type { Cluster, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config.js';

/** The longest a command waits for its reply; callers then fall back (contract section 12: about a second). */
export const REDIS_COMMAND_TIMEOUT_MS = 500;
const PROBE_INTERVAL_MS = 500;

export const REDIS_OPTIONS: RedisOptions = {
  // Fail fast while Redis is away, so callers fall back instead of queueing.
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  lazyConnect: true,
  connectTimeout: 1000,
  commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  // A frozen server keeps its sockets open: drop a connection whose replies stop, so that its status
  // says so and the next commands fail at once instead of each waiting for its timeout.
  socketTimeout: 1000,
  retryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
  // Whoever sent a command that a lost connection left unanswered has fallen back already: replaying
  // it later (a rate-limit count, a stale publish) would only do harm.
  autoResendUnfulfilledCommands: false,
};

// On a cluster every command goes to the primary of its slot; a failover is retried a few times
// within the command timeout, then the caller falls back like for a single Redis that is away.
export const REDIS_CLUSTER_OPTIONS: ClusterOptions = {
  enableOfflineQueue: false,
  lazyConnect: true,
  scaleReads: 'master',
  clusterRetryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
  retryDelayOnFailover: 100,
  retryDelayOnClusterDown: 100,
  retryDelayOnTryAgain: 100,
  maxRedirections: 4,
  slotsRefreshTimeout: 1000,
  // A promoted replica is found within a second even by an instance that sent nothing meanwhile.
  slotsRefreshInterval: 1000,
  redisOptions: {
    maxRetriesPerRequest: 1,
    connectTimeout: 1000,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    socketTimeout: 1000,
    autoResendUnfulfilledCommands: false,
  },
};

/**
 * The client for REDIS_URL or the cluster. A Cluster is typed as a Redis so that modules write each
 * command once: ioredis gives both the same command methods. What differs (pub/sub, the heartbeat) is
 * handled here; modules keep to single-slot commands (keys used together share a hash tag).
 */
export async function createRedisClient(config: Pick<Config, 'redis'>): Promise<Redis | undefined> {
  if (!config.redis.cluster && !config.redis.url) return undefined;
  const { Cluster, Redis } = await import('ioredis');
  if (config.redis.cluster) {
    const { nodes, username, password } = config.redis.cluster;
    const options: ClusterOptions = {
      ...REDIS_CLUSTER_OPTIONS,
      redisOptions: { ...REDIS_CLUSTER_OPTIONS.redisOptions, username, password },
    };
    return new Cluster(nodes, options) as unknown as Redis;
  }
  return config.redis.url ? new Redis(config.redis.url, REDIS_OPTIONS) : undefined;
}

/** The client as the Cluster it is, or undefined for a single Redis. */
export function asCluster(client: Redis): Cluster | undefined {
  return client.isCluster ? (client as unknown as Cluster) : undefined;
}

/** PUBLISH, or SPUBLISH on a cluster (where a PUBLISH is copied to every node). */
export function publish(client: Redis, channel: string, message: string): Promise<unknown> {
  return client.isCluster ? client.spublish(channel, message) : client.publish(channel, message);
}

/** A subscription to one channel, with its own connection, and a heartbeat check for RedisHealth. */
export interface Subscription {
  readonly connection: Redis;
  /** Throws when the subscription cannot be trusted to deliver (RedisHealth calls it). */
  check(): Promise<void>;
  close(): void;
}

/**
 * Subscribes to `channel`: SUBSCRIBE on a single Redis (ioredis subscribes again after a reconnection),
 * SSUBSCRIBE on a cluster to the primary that owns the channel's slot, moving to the new primary after
 * a failover (whose gap the check reports, so that whoever follows the channel resynchronises).
 */
export async function subscribe(
  client: Redis,
  channel: string,
  onMessage: (raw: string) => void,
): Promise<Subscription> {
  const cluster = asCluster(client);
  if (!cluster) {
    const connection = client.duplicate();
    connection.on('message', (_channel: string, raw: string) => onMessage(raw));
    if (connection.status === 'wait') await connection.connect();
    else if (connection.status !== 'ready') await new Promise((resolve) => connection.once('ready', resolve));
    await connection.subscribe(channel);
    return {
      connection,
      check: async () => {
        if (connection.status !== 'ready') throw new Error(`subscriber connection is ${connection.status}`);
        await connection.ping();
      },
      close: () => connection.disconnect(),
    };
  }
  const subscription = new ShardSubscription(cluster, channel, onMessage);
  await subscription.open();
  return subscription;
}

class ShardSubscription implements Subscription {
  connection!: Redis;
  private nodeKey = '';
  private slot = -1;
  private closed = false;
  private reopening: Promise<void> | undefined;

  constructor(
    private readonly cluster: Cluster,
    private readonly channel: string,
    private readonly onMessage: (raw: string) => void,
  ) {}

  async open(): Promise<void> {
    if (this.cluster.status === 'wait') await this.cluster.connect();
    this.slot = Number(await this.cluster.cluster('KEYSLOT', this.channel));
    await this.connect();
  }

  private owner(): string | undefined {
    return this.cluster.slots[this.slot]?.[0];
  }

  private async connect(): Promise<void> {
    const nodeKey = this.owner();
    if (!nodeKey) throw new Error(`no primary known for the slot of ${this.channel}`);
    const separator = nodeKey.lastIndexOf(':');
    const { redisOptions } = this.cluster.options;
    const { Redis } = await import('ioredis');
    const connection = new Redis({
      ...redisOptions,
      host: nodeKey.slice(0, separator),
      port: Number(nodeKey.slice(separator + 1)),
      lazyConnect: true,
      enableOfflineQueue: false,
      // The node may be gone for good (a failed primary): the check finds the slot's new owner instead.
      retryStrategy: () => null,
    });
    connection.on('error', () => undefined);
    connection.on('smessage', (_channel: string, raw: string) => this.onMessage(raw));
    this.connection?.disconnect();
    this.connection = connection;
    this.nodeKey = nodeKey;
    await connection.connect();
    await connection.ssubscribe(this.channel);
  }

  async check(): Promise<void> {
    if (this.closed) return;
    if (this.reopening) throw new Error('sharded subscription moving to a new primary');
    const owner = this.owner();
    if (owner === this.nodeKey && this.connection.status === 'ready') {
      await this.connection.ping();
      return;
    }
    // Whatever was published between the loss and the new subscription is missed: the caller hears of
    // the failure now and of the recovery after the new subscription answers a heartbeat.
    this.reopening = this.connect().finally(() => (this.reopening = undefined));
    this.reopening.catch(() => undefined);
    throw new Error(
      owner === this.nodeKey
        ? `sharded subscriber connection is ${this.connection.status}`
        : `channel moved from ${this.nodeKey} to ${owner}`,
    );
  }

  close(): void {
    this.closed = true;
    this.connection?.disconnect();
  }
}

type Listener = (up: boolean) => void;

/** Every primary of a cluster answers, or the connection answers. */
async function heartbeat(client: Redis): Promise<void> {
  if (client.status !== 'ready') throw new Error(`connection is ${client.status}`);
  const cluster = asCluster(client);
  if (!cluster) {
    await client.ping();
    return;
  }
  const primaries = cluster.nodes('master');
  if (primaries.length === 0) throw new Error('no cluster primary known');
  await Promise.all(primaries.map((node) => node.ping()));
}

export class RedisHealth {
  private state: 'up' | 'down' = 'up';
  private since = performance.now();
  private failures = new Map<string, number>();
  private lastFailureAt = -Infinity;
  /** Each watched connection's heartbeat check, by name. */
  private readonly checks = new Map<string, () => Promise<void>>();
  private readonly listeners = new Set<Listener>();
  private readonly timer: NodeJS.Timeout;
  private probing = false;
  private closed = false;

  constructor(private readonly logger: Logger) {
    this.timer = setInterval(() => void this.probe(), PROBE_INTERVAL_MS);
    this.timer.unref();
  }

  /** Whether every watched connection is ready and answered the last heartbeat. */
  get up(): boolean {
    return this.state === 'up';
  }

  /**
   * Follows a connection: its errors and closes count as failures, and it must pass each heartbeat
   * (by default: ready and answering PING, on a cluster every primary).
   */
  watch(name: string, client: Redis, check: () => Promise<void> = () => heartbeat(client)): () => void {
    const onError = (err: Error) => this.failure(name, err);
    const onClose = () => this.failure(name, 'connection closed');
    // A cluster reports a lost node this way (its own 'error' is for the whole cluster).
    const onNodeError = (err: Error) => this.failure(name, err);
    client.on('error', onError);
    client.on('close', onClose);
    if (client.isCluster) client.on('node error', onNodeError);
    this.checks.set(name, check);
    return () => {
      client.off('node error', onNodeError);
      client.off('error', onError);
      client.off('close', onClose);
      this.checks.delete(name);
    };
  }

  /** Called with true when Redis is back (after a heartbeat on every connection), false when it is lost. */
  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A command or connection failed: Redis counts as down until the next heartbeat succeeds everywhere. */
  failure(source: string, err: unknown): void {
    if (this.closed) return;
    // Redis answered, with an error: it is there (a flap would reload every cache for nothing).
    if ((err as Error | undefined)?.name === 'ReplyError') {
      this.logger.warn({ source, err: (err as Error).message }, 'redis refused a command');
      return;
    }
    if (this.state === 'up') {
      this.change('down');
      this.logger.warn(
        { source, err: err instanceof Error ? err.message : String(err) },
        'redis lost: running on in-process fallbacks',
      );
    }
    this.failures.set(source, (this.failures.get(source) ?? 0) + 1);
    this.lastFailureAt = performance.now();
  }

  /** The heartbeat: every watched connection ready and answering a PING. */
  private async probe(): Promise<void> {
    if (this.probing || this.closed) return;
    this.probing = true;
    const started = performance.now();
    try {
      await Promise.all(
        [...this.checks].map(async ([name, check]) => {
          await check().catch((err: Error) => {
            throw Object.assign(err, { source: name });
          });
        }),
      );
      // Not when something failed while the PINGs were out (a connection closed meanwhile).
      if (this.state === 'down' && !this.closed && this.lastFailureAt < started) {
        const downMs = Math.round(performance.now() - this.since);
        const failures = Object.fromEntries(this.failures);
        this.change('up');
        this.logger.info({ downMs, failures }, 'redis recovered');
      }
    } catch (err) {
      this.failure((err as { source?: string }).source ?? 'heartbeat', err);
    } finally {
      this.probing = false;
    }
  }

  private change(state: 'up' | 'down'): void {
    this.state = state;
    this.since = performance.now();
    this.failures = new Map();
    for (const listener of this.listeners) {
      try {
        listener(state === 'up');
      } catch (err) {
        this.logger.error({ err }, 'redis state listener failed');
      }
    }
  }

  /** Stops the heartbeat; closing connections afterwards is not a failure. */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
  }
}
