// This process's followers of jobs: status events from `job.changed` (every instance hears it), driver
// positions from the live index (every instance holds them), throttled per job to one per interval.
// One database read per change of a followed job, whatever the number of followers; each frame is
// built once and written to every follower.
import { LRUCache } from 'lru-cache';
import {
  HEADING,
  MAX_REPLAY,
  decodeCursor,
  encodeCursor,
  eta,
  publicState,
  statusFrame,
  type JobSnapshot,
  type JobType,
  type SnapshotLoader,
} from './tracking-frames.js';
import type { SseSink } from '../../http/sse.js';
import { sseFrame } from '../../http/sse.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus, BusEvents } from '../../shared/bus.js';
import type { Logger } from 'pino';
import type { Position } from '../matching/driver-index.js';
import type { VehicleType } from '../../db/schema.js';

export * from './tracking-frames.js';
const RETRY_MS = 1000;

interface Member {
  sink: SseSink;
  /** History entries already sent. */
  sent: number;
  /** Bearer followers: visibility is checked again on each change. Token followers: none. */
  auth: AuthContext | undefined;
  viaToken: boolean;
}

interface Watch {
  key: string;
  snap: JobSnapshot;
  members: Set<Member>;
  /** The time of the last position sent (the position's own time). */
  lastSentAt: number;
  pending: Position | undefined;
  timer: NodeJS.Timeout | undefined;
  reloading: boolean;
  reloadAgain: boolean;
}

interface AccountMember {
  sink: SseSink;
  auth: AuthContext;
  /** Live frames held while missed ones are read from the database (they go out after them). */
  held: string[] | undefined;
}

export interface TrackingHubDeps {
  bus: Bus;
  logger: Logger;
  load: SnapshotLoader;
  intervalMs: number;
  positionTtlMs: number;
  nowMs(): number;
  /**
   * The ETA by road (the router, contract section 25); unset (ROUTER=straight): the straight line at
   * the vehicle's average speed. With it, a position's frames wait for the router (at most its timeout).
   */
  roadEta?: (
    from: { lat: number; lng: number },
    to: { lat: number; lng: number },
    vehicleType: VehicleType,
  ) => Promise<{ durationSeconds: number }>;
}

const keyOf = (jobType: JobType, jobId: string) => `${jobType}:${jobId}`;

export class TrackingHub {
  private readonly watches = new Map<string, Watch>();
  private readonly byDriver = new Map<string, Set<Watch>>();
  private readonly accounts = new Set<AccountMember>();
  /** Every job change counts; a follower that read its snapshot before a change of its job reloads. */
  private seq = 0;
  private readonly changedAt = new LRUCache<string, number>({ max: 50_000 });
  private readonly unsubscribe: (() => void)[];

  constructor(private readonly deps: TrackingHubDeps) {
    const { bus } = deps;
    this.unsubscribe = [
      bus.subscribe('job.changed', (e) => this.changed(e)),
      bus.subscribe('tracking.rotated', ({ packageId }) => this.endTokenFollowers(packageId)),
      bus.subscribe('session.revoked', ({ sessionId }) => this.endWhere((auth) => auth.sessionId === sessionId)),
      bus.subscribe('user.changed', ({ userId, status }) => {
        if (status !== undefined && status !== 'ACTIVE') this.endWhere((auth) => auth.userId === userId);
      }),
      // Changes may have been missed while Redis was away: every followed job is read again, and
      // account streams (which cannot tell which jobs changed) are told to read their lists again.
      bus.subscribe('bus.resync', () => {
        for (const w of this.watches.values()) void this.reload(w);
        this.resyncAccounts(this.accounts);
      }),
    ];
  }

  get followers(): number {
    let n = this.accounts.size;
    for (const w of this.watches.values()) n += w.members.size;
    return n;
  }

  close(): void {
    for (const off of this.unsubscribe) off();
    for (const w of this.watches.values()) clearTimeout(w.timer);
  }

  /** Taken before reading a snapshot for follow(): changes after it make the follower read again. */
  mark(): number {
    return this.seq;
  }

  /**
   * Starts following a job: missed status events replayed from Last-Event-ID (or `resync` when it is
   * too old), else the current status; then the latest position and ETA. A final job ends the stream.
   */
  follow(
    snap: JobSnapshot,
    sink: SseSink,
    options: { mark: number; lastEventId?: string; auth?: AuthContext; viaToken: boolean },
  ): () => void {
    const member: Member = { sink, sent: snap.history.length, auth: options.auth, viaToken: options.viaToken };
    this.sendInitial(snap, member, options.lastEventId);
    if (snap.final) {
      sink.end();
      return () => undefined;
    }
    const key = keyOf(snap.jobType, snap.jobId);
    let watch = this.watches.get(key);
    if (!watch) {
      watch = {
        key,
        snap,
        members: new Set(),
        lastSentAt: 0,
        pending: undefined,
        timer: undefined,
        reloading: false,
        reloadAgain: false,
      };
      this.watches.set(key, watch);
      this.index(watch, null, snap.driverId);
    }
    watch.members.add(member);
    const position = this.livePosition(snap);
    if (position) this.sendPosition(snap, position, [member]);
    if ((this.changedAt.get(key) ?? -1) > options.mark) void this.reload(watch);
    const w = watch;
    return () => this.leave(w, member);
  }

  /** The account stream: a status event for every job change the account may see. */
  followAccount(
    sink: SseSink,
    auth: AuthContext,
    options: { hold?: boolean } = {},
  ): { stop(): void; release(first: string[]): void } {
    const member: AccountMember = { sink, auth, held: options.hold ? [] : undefined };
    this.accounts.add(member);
    return {
      stop: () => this.accounts.delete(member),
      release: (first) => {
        const held = member.held ?? [];
        member.held = undefined;
        const sent = new Set(first);
        for (const frame of first) sink.send(frame);
        for (const frame of held) if (!sent.has(frame)) sink.send(frame);
      },
    };
  }

  /**
   * A driver position (reported here or received from another instance). Throttled on the positions'
   * own times: one at least an interval after the last one sent goes out at once; a closer one waits
   * out the rest of the interval, replaced meanwhile by any newer one. (Throttling on the time they
   * arrive would delay a driver reporting exactly every interval by the jitter of its network.)
   */
  position(driverId: string, position: Position): void {
    const watches = this.byDriver.get(driverId);
    if (!watches) return;
    for (const w of watches) {
      if (!HEADING[w.snap.status]) continue;
      w.pending = position;
      if (w.timer) continue;
      const early = w.lastSentAt + this.deps.intervalMs - position.at;
      if (early <= 0) this.flushPosition(w);
      else {
        w.timer = setTimeout(
          () => {
            w.timer = undefined;
            this.flushPosition(w);
          },
          Math.min(early, this.deps.intervalMs),
        );
        w.timer.unref();
      }
    }
  }

  private flushPosition(w: Watch): void {
    const p = w.pending;
    w.pending = undefined;
    if (!p || !HEADING[w.snap.status]) return;
    w.lastSentAt = p.at;
    w.snap.position = p;
    this.sendPosition(w.snap, p, w.members);
  }

  /** The location and ETA frames, written together (one write per follower) and superseded together. */
  private sendPosition(snap: JobSnapshot, p: Position, members: Iterable<Member>): void {
    const roadEta = this.deps.roadEta;
    const to = HEADING[snap.status];
    if (roadEta && snap.driver && to && !(snap.roadEta?.at === p.at && snap.roadEta.to === to)) {
      const targets = [...members];
      roadEta(p, to === 'PICKUP' ? snap.pickup : snap.dropoff, snap.driver.vehicleType).then(
        (leg) => {
          // A newer position's ETA already out: this one is stale.
          if (snap.roadEta && snap.roadEta.at > p.at) return;
          snap.roadEta = { at: p.at, to, etaSeconds: leg.durationSeconds };
          this.sendPosition(snap, p, targets);
        },
        (err: unknown) => this.deps.logger.warn({ err }, 'tracking ETA by road failed'),
      );
      return;
    }
    const location = sseFrame('location', { location: { lat: p.lat, lng: p.lng }, at: new Date(p.at).toISOString() });
    const frames = snap.driver ? location + sseFrame('eta', eta(snap, p)) : location;
    for (const m of members) {
      m.sink.sendLatest('position', frames);
    }
  }

  private livePosition(snap: JobSnapshot): Position | null {
    if (!HEADING[snap.status] || !snap.position) return null;
    return this.deps.nowMs() - snap.position.at <= this.deps.positionTtlMs ? snap.position : null;
  }

  private sendInitial(snap: JobSnapshot, member: Member, lastEventId: string | undefined): void {
    const total = snap.history.length;
    if (lastEventId === undefined) {
      if (total > 0) member.sink.send(this.statusFrame(snap, total - 1, member));
      return;
    }
    const cursor = decodeCursor(lastEventId);
    if (!cursor || cursor.jobId !== snap.jobId || cursor.seq > total || total - cursor.seq > MAX_REPLAY) {
      const state = {
        jobType: snap.jobType,
        jobId: snap.jobId,
        ...publicState(snap, this.deps.nowMs(), this.deps.positionTtlMs),
      };
      member.sink.send(sseFrame('resync', state, encodeCursor(snap.jobId, total)));
      return;
    }
    for (let i = cursor.seq; i < total; i += 1) member.sink.send(this.statusFrame(snap, i, member));
  }

  private statusFrame(snap: JobSnapshot, index: number, member: { viaToken: boolean }): string {
    const entry = snap.history[index]!;
    return statusFrame(
      snap.jobType,
      snap.jobId,
      index + 1,
      member.viaToken ? { status: entry.status, at: entry.at } : entry,
    );
  }

  private changed(e: BusEvents['job.changed']): void {
    this.seq += 1;
    const key = keyOf(e.jobType, e.jobId);
    this.changedAt.set(key, this.seq);
    const watch = this.watches.get(key);
    if (watch) void this.reload(watch);
    if (this.accounts.size) void this.tellAccounts(e);
  }

  private async reload(w: Watch): Promise<void> {
    if (w.reloading) {
      w.reloadAgain = true;
      return;
    }
    w.reloading = true;
    try {
      do {
        w.reloadAgain = false;
        const snap = await this.deps.load(w.snap.jobType, w.snap.jobId);
        if (!snap) {
          this.drop(w, (m) => m.sink.end());
          return;
        }
        this.apply(w, snap);
      } while (w.reloadAgain && this.watches.get(w.key) === w);
    } catch (err) {
      this.deps.logger.warn({ err, job: w.key }, 'reading a followed job failed; trying again');
      const retry = setTimeout(() => this.watches.get(w.key) === w && void this.reload(w), RETRY_MS);
      retry.unref();
    } finally {
      w.reloading = false;
    }
  }

  private apply(w: Watch, snap: JobSnapshot): void {
    const before = w.snap;
    if (snap.position === null || (before.position && before.position.at > snap.position.at))
      snap.position = before.position;
    w.snap = snap;
    if (before.driverId !== snap.driverId) this.index(w, before.driverId, snap.driverId);
    for (const m of [...w.members]) {
      // Someone who may no longer see the job (a driver that handed it back) stops following it.
      if (m.auth && !snap.canSee(m.auth)) {
        this.leave(w, m);
        m.sink.end();
        continue;
      }
      for (let i = m.sent; i < snap.history.length; i += 1) m.sink.send(this.statusFrame(snap, i, m));
      m.sent = Math.max(m.sent, snap.history.length);
    }
    if (snap.final) this.drop(w, (m) => m.sink.end());
    else if (!HEADING[snap.status]) w.pending = undefined;
  }

  private async tellAccounts(e: BusEvents['job.changed']): Promise<void> {
    try {
      const snap = await this.deps.load(e.jobType, e.jobId);
      if (!snap) return;
      let index = -1;
      for (let i = snap.history.length - 1; i >= 0; i -= 1) {
        if (snap.history[i]!.status === e.status) {
          index = i;
          break;
        }
      }
      if (index < 0) return;
      let frame: string | undefined;
      for (const m of this.accounts) {
        if (m.sink.closed || !snap.canSee(m.auth)) continue;
        frame ??= this.statusFrame(snap, index, { viaToken: false });
        if (m.held) m.held.push(frame);
        else m.sink.send(frame);
      }
    } catch (err) {
      this.deps.logger.warn({ err, jobId: e.jobId }, 'reading a changed job for account streams failed');
      this.resyncAccounts(this.accounts);
    }
  }

  /** Another module's event (section 23's `event: alert`) to the account streams that may see it. */
  tellAccountsEvent(event: string, data: unknown, canSee: (auth: AuthContext) => boolean): void {
    let frame: string | undefined;
    for (const m of this.accounts) {
      if (m.sink.closed || !canSee(m.auth)) continue;
      frame ??= sseFrame(event, data);
      if (m.held) m.held.push(frame);
      else m.sink.send(frame);
    }
  }

  /** Followers that may have missed a status are told so (never a silent gap). */
  private resyncAccounts(members: Iterable<AccountMember>): void {
    const frame = sseFrame('resync', { reason: 'CANNOT_REPLAY' });
    for (const m of members) {
      if (m.held) m.held.push(frame);
      else m.sink.send(frame);
    }
  }

  private index(w: Watch, from: string | null, to: string | null): void {
    if (from) {
      const set = this.byDriver.get(from);
      set?.delete(w);
      if (set?.size === 0) this.byDriver.delete(from);
    }
    if (to) {
      let set = this.byDriver.get(to);
      if (!set) this.byDriver.set(to, (set = new Set()));
      set.add(w);
    }
  }

  private leave(w: Watch, m: Member): void {
    w.members.delete(m);
    if (w.members.size === 0 && this.watches.get(w.key) === w) this.drop(w);
  }

  private drop(w: Watch, each?: (m: Member) => void): void {
    this.watches.delete(w.key);
    clearTimeout(w.timer);
    w.timer = undefined;
    this.index(w, w.snap.driverId, null);
    const members = [...w.members];
    w.members.clear();
    if (each) for (const m of members) each(m);
  }

  private endTokenFollowers(packageId: string): void {
    const w = this.watches.get(keyOf('PACKAGE', packageId));
    if (!w) return;
    for (const m of [...w.members]) {
      if (!m.viaToken) continue;
      this.leave(w, m);
      m.sink.end();
    }
  }

  private endWhere(test: (auth: AuthContext) => boolean): void {
    for (const w of [...this.watches.values()]) {
      for (const m of [...w.members]) {
        if (m.auth && test(m.auth)) {
          this.leave(w, m);
          m.sink.end();
        }
      }
    }
    for (const m of [...this.accounts]) {
      if (test(m.auth)) {
        this.accounts.delete(m);
        m.sink.end();
      }
    }
  }
}
