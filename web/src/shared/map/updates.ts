// What a map still has to change, applied a slice per animation frame (no Leaflet here: pure, tested
// in Node). A new list of points queues only what differs from the previous one; a marker that
// changes again before its turn keeps its place in the queue and takes the newest value, so the
// queue never holds more than one change per marker however fast the updates come.
import type { MapPoint } from './types.js';

export type Change = [id: string, point: MapPoint | null];

export class PendingChanges {
  /** What the map shows once every queued change is applied. */
  private readonly wanted = new Map<string, MapPoint>();
  /** Changes not applied yet, oldest first: a point to add or move, null to remove. */
  private readonly queue = new Map<string, MapPoint | null>();

  get size(): number {
    return this.queue.size;
  }

  /** The whole new list of points. */
  set(points: readonly MapPoint[]): void {
    const seen = new Set<string>();
    for (const p of points) {
      seen.add(p.id);
      const w = this.wanted.get(p.id);
      if (w && w.lat === p.lat && w.lng === p.lng && w.kind === p.kind && w.label === p.label) continue;
      this.wanted.set(p.id, p);
      this.queue.set(p.id, p);
    }
    if (seen.size === this.wanted.size) return;
    for (const id of this.wanted.keys()) {
      if (seen.has(id)) continue;
      this.wanted.delete(id);
      this.queue.set(id, null);
    }
  }

  /** Up to `count` changes, oldest first, removed from the queue. */
  take(count: number): Change[] {
    const out: Change[] = [];
    for (const change of this.queue) {
      if (out.length >= count) break;
      out.push(change);
    }
    for (const [id] of out) this.queue.delete(id);
    return out;
  }

  clear(): void {
    this.wanted.clear();
    this.queue.clear();
  }
}

/**
 * How many changes fit in a frame's budget: the time per change (fixed costs included) measured on
 * the slices applied so far, a moving average, so that a slice takes about `budgetMs`.
 */
export class Pacer {
  private msPerChange: number | undefined;

  constructor(
    private readonly budgetMs: number,
    private readonly first = 100,
    private readonly min = 10,
  ) {}

  size(): number {
    if (this.msPerChange === undefined) return this.first;
    return Math.max(this.min, Math.floor(this.budgetMs / this.msPerChange));
  }

  record(changes: number, ms: number): void {
    if (changes === 0) return;
    const sample = Math.max(ms, 0.01) / changes;
    this.msPerChange = this.msPerChange === undefined ? sample : 0.7 * this.msPerChange + 0.3 * sample;
  }
}
