// Server-Sent Events written by hand over the raw response (docs/tracking.md says why): a connection
// that never lets a slow client slow the writer or the other clients. Frames that must arrive
// (statuses) queue up to a bound, then the connection is closed so that the client reconnects with
// Last-Event-ID and is replayed; frames that only matter when fresh (positions) keep the newest one
// per key while the socket is full.
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tooManyRequests } from '../shared/errors.js';
import { clientKey } from './rate-limit.js';

export const HEARTBEAT_MS = 15_000;
/** Must-arrive bytes held for one slow client before it is cut off (it then reconnects and replays). */
export const MAX_QUEUED_BYTES = 64 * 1024;
/** How long a browser waits before reconnecting (the `retry:` field). */
const RETRY_MS = 3000;

/** One event. JSON.stringify never writes a raw line break, so `data` is always one line. */
export function sseFrame(event: string, data: unknown, id?: string): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export interface SseSink {
  readonly closed: boolean;
  /** A frame that must arrive, in order. */
  send(frame: string): void;
  /** A frame superseded by the next one of the same key: while the client is slow only the newest waits. */
  sendLatest(key: string, frame: string): void;
  /** Writes the frame, if any, and ends the stream. */
  end(frame?: string): void;
}

export class SseConnection implements SseSink {
  closed = false;
  private blocked = false;
  private queue: string[] | undefined;
  private queuedBytes = 0;
  private latest: Map<string, string> | undefined;
  private onClose: (() => void) | undefined;
  private wrote = false;

  private constructor(private readonly res: ServerResponse) {
    res.on('close', () => this.release());
    res.on('drain', () => this.drain());
    res.on('error', () => this.release());
  }

  /**
   * Takes the response over from Fastify (its serializers and hooks do not apply to a stream) and
   * sends the headers; proxies are told not to buffer (X-Accel-Buffering) or transform it.
   */
  static open(request: FastifyRequest, reply: FastifyReply): SseConnection {
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-store, no-transform',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    request.raw.socket.setNoDelay(true);
    const connection = new SseConnection(res);
    connection.write(`retry: ${RETRY_MS}\n\n`);
    return connection;
  }

  /** Whether the client is behind (the socket's buffer is full). */
  get congested(): boolean {
    return this.blocked;
  }

  /** Called once when the stream ends, whoever ended it. */
  closing(handler: () => void): void {
    this.onClose = handler;
  }

  send(frame: string): void {
    if (this.closed) return;
    if (!this.blocked) return this.write(frame);
    this.queuedBytes += frame.length;
    if (this.queuedBytes > MAX_QUEUED_BYTES) return this.destroy();
    (this.queue ??= []).push(frame);
  }

  sendLatest(key: string, frame: string): void {
    if (this.closed) return;
    if (!this.blocked) return this.write(frame);
    (this.latest ??= new Map()).set(key, frame);
  }

  /** A comment line, so that proxies keep the connection: only when nothing else was written since the last one. */
  heartbeat(): void {
    if (this.wrote) this.wrote = false;
    else if (!this.closed && !this.blocked && !this.res.write(':\n\n')) this.blocked = true;
  }

  end(frame?: string): void {
    if (this.closed) return;
    if (frame) this.send(frame);
    if (this.closed) return;
    // Whatever still waits goes first; end() flushes it after the queued writes.
    this.flushWaiting();
    this.res.end();
    this.release();
  }

  private write(chunk: string): void {
    this.wrote = true;
    if (!this.res.write(chunk)) this.blocked = true;
  }

  private flushWaiting(): void {
    const queue = this.queue;
    const latest = this.latest;
    this.queue = undefined;
    this.latest = undefined;
    this.queuedBytes = 0;
    if (queue) for (const frame of queue) this.write(frame);
    if (latest) for (const frame of latest.values()) this.write(frame);
  }

  private drain(): void {
    if (this.closed) return;
    this.blocked = false;
    this.flushWaiting();
  }

  private destroy(): void {
    this.res.destroy();
    this.release();
  }

  private release(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = undefined;
    this.latest = undefined;
    const handler = this.onClose;
    this.onClose = undefined;
    handler?.();
  }
}

/** Heartbeats are spread over this many turns of the interval: one turn writing to every stream blocked the loop. */
const HEARTBEAT_SLICES = 15;

/** Open streams allowed at once per account and per client address (STREAMS_PER_ACCOUNT, STREAMS_PER_IP). */
export interface StreamCaps {
  perAccount: number;
  perIp: number;
}

/**
 * The open streams of one app: heartbeats for all of them, their caps, and an end to all of them when
 * it closes. The caps are counted on this process: they protect its sockets and memory, which is what
 * one client holding thousands of streams costs (docs/tracking.md).
 */
export class SseRegistry {
  private readonly slices: Set<SseConnection>[] = Array.from({ length: HEARTBEAT_SLICES }, () => new Set());
  private next = 0;
  private turn = 0;
  private count = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly byAccount = new Map<string, number>();
  private readonly byIp = new Map<string, number>();

  constructor(
    private readonly caps: StreamCaps,
    private readonly heartbeatMs = HEARTBEAT_MS,
  ) {}

  get size(): number {
    return this.count;
  }

  /**
   * Opens the stream of `account` (none for the public tracking stream: its IP is counted only), or
   * throws 429 TOO_MANY_STREAMS while the account or the client's IP holds its cap. Its slots are
   * free again when the stream ends, whoever ends it.
   */
  connect(request: FastifyRequest, reply: FastifyReply, onClose: () => void, account?: string): SseConnection {
    // As the rate limits count a client: its IPv4 address or its IPv6 /64.
    const ip = clientKey(request.ip);
    if (account !== undefined && (this.byAccount.get(account) ?? 0) >= this.caps.perAccount) {
      throw tooManyStreams(
        `Too many open event streams for this account (at most ${this.caps.perAccount}): close one first`,
      );
    }
    if ((this.byIp.get(ip) ?? 0) >= this.caps.perIp) {
      throw tooManyStreams(
        `Too many open event streams from this address (at most ${this.caps.perIp}): close one first`,
      );
    }
    const connection = SseConnection.open(request, reply);
    const slice = this.slices[this.next++ % HEARTBEAT_SLICES]!;
    slice.add(connection);
    this.count += 1;
    if (account !== undefined) add(this.byAccount, account, 1);
    add(this.byIp, ip, 1);
    connection.closing(() => {
      slice.delete(connection);
      this.count -= 1;
      if (account !== undefined) add(this.byAccount, account, -1);
      add(this.byIp, ip, -1);
      onClose();
    });
    if (!this.timer) {
      this.timer = setInterval(() => {
        for (const c of this.slices[this.turn++ % HEARTBEAT_SLICES]!) c.heartbeat();
      }, this.heartbeatMs / HEARTBEAT_SLICES);
      this.timer.unref();
    }
    return connection;
  }

  /** Ends every stream (at shutdown: an open stream would keep the server from closing). */
  closeAll(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const slice of this.slices) for (const c of [...slice]) c.end();
  }
}

/** Retry-After of a refused stream: the reconnection delay a browser is given (`retry:`). */
const tooManyStreams = (message: string) => tooManyRequests(message, RETRY_MS / 1000, 'TOO_MANY_STREAMS');

function add(counts: Map<string, number>, key: string, delta: number): void {
  const value = (counts.get(key) ?? 0) + delta;
  if (value > 0) counts.set(key, value);
  else counts.delete(key);
}
