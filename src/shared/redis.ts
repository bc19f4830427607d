// Redis connection settings, and this instance's view of Redis: up or down, decided by a heartbeat on
// every connection it watches and by failed commands. It logs one line per change of state.
import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

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

type Listener = (up: boolean) => void;

export class RedisHealth {
  private state: 'up' | 'down' = 'up';
  private since = performance.now();
  private failures = new Map<string, number>();
  private lastFailureAt = -Infinity;
  private readonly clients = new Map<string, Redis>();
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

  /** Follows a connection: its errors and closes count as failures, and it must answer each heartbeat. */
  watch(name: string, client: Redis): () => void {
    const onError = (err: Error) => this.failure(name, err);
    const onClose = () => this.failure(name, 'connection closed');
    client.on('error', onError);
    client.on('close', onClose);
    this.clients.set(name, client);
    return () => {
      client.off('error', onError);
      client.off('close', onClose);
      this.clients.delete(name);
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
      this.logger.warn({ source, err: err instanceof Error ? err.message : String(err) }, 'redis lost: running on in-process fallbacks');
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
        [...this.clients].map(async ([name, client]) => {
          if (client.status !== 'ready') throw Object.assign(new Error(`${name} connection is ${client.status}`), { source: name });
          await client.ping().catch((err: Error) => {
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
