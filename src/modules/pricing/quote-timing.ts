// A quote's timing (contract section 22): pickupEta, dropoffEta and availability OK / WARN / BLOCK.
// BLOCK: no driver of the vehicle type active in the area (the surge cell and its 8 neighbours) in
// the last 7 days, or the drop-off window cannot be reached by travel time; WARN: that hour's supply
// a week before was below its demand; OK otherwise. Area answers are cached, so the quote path stays cheap.
import { LRUCache } from 'lru-cache';
import type { VehicleType } from '../../db/schema.js';
import type { Clock } from '../../shared/clock.js';
import type { Windows } from '../scheduling/windows.js';
import type { AvailabilityRepository, Box } from './availability.repository.js';
import type { SurgeGrid } from './surge.js';

export type Availability = 'OK' | 'WARN' | 'BLOCK';

const WEEK_MS = 7 * 24 * 3600_000;
const HOUR_MS = 3600_000;
/** An area's answers are read again after this. */
const CACHE_MS = 5 * 60_000;

export interface QuoteTimingInput {
  vehicleType: VehicleType;
  pickup: { lat: number; lng: number };
  windows: Pick<Windows, 'pickupWindow' | 'dropoffWindow'>;
  scheduledAt: Date | null;
  /** The nearest driver's time to the pickup (ASAP), null when none is near. */
  pickupEtaSeconds: number | null;
  durationSeconds: number;
}

export class QuoteTiming {
  private readonly cache = new LRUCache<string, { value: unknown; at: number }>({ max: 20_000 });

  constructor(private readonly deps: { repo: AvailabilityRepository; grid: SurgeGrid; clock: Clock }) {}

  private area(lat: number, lng: number): { key: string; box: Box } {
    const { grid } = this.deps;
    const [row, col] = grid.cellOf(lat, lng);
    const boxes = grid.block(row, col).map(([r, lo, hi]) => grid.box(r, lo, hi));
    return {
      key: `${row}:${col}`,
      box: {
        south: Math.min(...boxes.map((b) => b[0])),
        west: Math.min(...boxes.map((b) => b[1])),
        north: Math.max(...boxes.map((b) => b[2])),
        east: Math.max(...boxes.map((b) => b[3])),
      },
    };
  }

  private async cached<T>(key: string, read: () => Promise<T>): Promise<T> {
    const now = this.deps.clock.nowMs();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < CACHE_MS) return hit.value as T;
    const value = await read();
    this.cache.set(key, { value, at: now });
    return value;
  }

  async answer(
    input: QuoteTimingInput,
  ): Promise<{ pickupEta: string | null; dropoffEta: string | null; availability: Availability }> {
    const now = this.deps.clock.nowMs();
    const { pickupWindow, dropoffWindow } = input.windows;
    const start = pickupWindow?.start ?? input.scheduledAt;
    const pickupMs = start
      ? Math.max(start.getTime(), now)
      : input.pickupEtaSeconds !== null
        ? now + input.pickupEtaSeconds * 1000
        : null;
    const dropoffMs = pickupMs !== null ? pickupMs + input.durationSeconds * 1000 : null;
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    const answer = (availability: Availability) => ({
      pickupEta: iso(pickupMs),
      dropoffEta: iso(dropoffMs),
      availability,
    });

    // The drop-off window cannot be reached: its end comes before the earliest pickup plus the trip.
    const earliestPickup = pickupWindow ? Math.max(pickupWindow.start.getTime(), now) : (pickupMs ?? now);
    if (dropoffWindow && earliestPickup + input.durationSeconds * 1000 > dropoffWindow.end.getTime())
      return answer('BLOCK');

    const { key, box } = this.area(input.pickup.lat, input.pickup.lng);
    const active = await this.cached(`active:${input.vehicleType}:${key}`, () =>
      this.deps.repo.activeSince(box, input.vehicleType, new Date(now - WEEK_MS)),
    );
    if (!active) return answer('BLOCK');
    const hourStart = Math.floor(((pickupMs ?? now) - WEEK_MS) / HOUR_MS) * HOUR_MS;
    const hour = await this.cached(`hour:${input.vehicleType}:${key}:${hourStart}`, () =>
      this.deps.repo.hour(box, input.vehicleType, new Date(hourStart), new Date(hourStart + HOUR_MS)),
    );
    return answer(hour.supply < hour.demand ? 'WARN' : 'OK');
  }
}
