// One way in for a driver's position, whatever carried it (the driver WebSocket, POST
// /drivers/me/location, Traccar Client's OsmAnd requests): the same validation (LocationMessage's
// schema, the HTTP route's Ajv and formats), the same plausibility rule (contract section 19) and the
// same pipeline (the live index, then write-behind, other instances, dispatch and tracking streams
// through LiveDrivers.report).
import type { Static } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { Counter, type Registry } from 'prom-client';
import { compileBodySchema, describeValidationError } from '../../http/validation.js';
import { distanceMeters } from '../matching/driver-index.js';
import type { LiveDrivers } from '../matching/live-drivers.js';
import { LocationMessage } from './drivers.schemas.js';

const validateLocation = compileBodySchema(LocationMessage) as ValidateFunction<Static<typeof LocationMessage>>;

export type PositionOutcome = { ok: true; applied: boolean } | { ok: false; message: string };
export type PositionSource = 'websocket' | 'http' | 'osmand';

export interface ReportedPosition {
  lat: number;
  lng: number;
  heading?: number;
  speed?: number;
  accuracy?: number;
  recordedAt?: string;
}

/** Consecutive positions consistent with each other that are accepted however far they are from the last accepted one. */
const RECOVERY_POSITIONS = 3;
/**
 * A stated accuracy counts for at most this much: the contract's speed subtracts both accuracies,
 * and a client claiming 100 km of uncertainty would otherwise make any jump of that size plausible.
 */
const MAX_COUNTED_ACCURACY_M = 2000;

interface Fix {
  lat: number;
  lng: number;
  at: number;
  accuracy: number;
}

interface DriverState {
  /** The last position accepted here, for its accuracy (the live index does not hold accuracies). */
  last?: Fix;
  /** Implausible positions since then, each consistent with the one before it. */
  pending: Fix[];
}

export class PositionIntake {
  private readonly states = new Map<string, DriverState>();
  private readonly implausible: Counter<'source'>;
  private readonly maxMetersPerSecond: number | null;

  constructor(private readonly deps: { live: LiveDrivers; registry: Registry; maxPlausibleSpeedKmh: number | null }) {
    this.maxMetersPerSecond = deps.maxPlausibleSpeedKmh === null ? null : deps.maxPlausibleSpeedKmh / 3.6;
    this.implausible = new Counter({
      name: 'positions_implausible_total',
      help: 'Driver positions not applied: they imply more than MAX_PLAUSIBLE_SPEED from the last accepted one',
      labelNames: ['source'],
      registers: [deps.registry],
    });
  }

  /**
   * Checks a `{ type: "location", lat, lng, ... }` message, then as `report`. `name` names the input
   * in the error message.
   */
  accept(driverId: string, message: unknown, source: PositionSource, name = 'message'): PositionOutcome {
    if (!validateLocation(message))
      return { ok: false, message: describeValidationError(validateLocation.errors ?? [], name) };
    return { ok: true, applied: this.report(driverId, message, source) };
  }

  /**
   * A validated position. Whether it was applied: false for one older than the one held (ignored, as
   * over HTTP) and for an implausible one (answered as accepted all the same, contract section 19).
   */
  report(driverId: string, input: ReportedPosition, source: PositionSource): boolean {
    const { live } = this.deps;
    if (this.maxMetersPerSecond === null) return live.report(driverId, input);
    const fix: Fix = {
      lat: input.lat,
      lng: input.lng,
      at: live.positionTime(input.recordedAt),
      accuracy: counted(input.accuracy),
    };
    // The last accepted position is the live index's: it holds what every instance accepted (shared
    // through Redis), so a driver whose positions reach several instances is checked against all of them.
    const held = live.index.get(driverId)?.position;
    let state = this.states.get(driverId);
    if (held && fix.at >= held.at) {
      const last = state?.last;
      const heldFix = {
        lat: held.lat,
        lng: held.lng,
        at: held.at,
        accuracy: last && last.at === held.at && last.lat === held.lat && last.lng === held.lng ? last.accuracy : 0,
      };
      if (!this.plausible(heldFix, fix)) {
        state ??= this.remember(driverId);
        const previous = state.pending.at(-1);
        state.pending = previous && this.plausible(previous, fix) ? [...state.pending, fix] : [fix];
        if (state.pending.length < RECOVERY_POSITIONS) {
          this.implausible.inc({ source });
          return false;
        }
        // Recovery: the driver really is there (or the last accepted position was the wrong one).
      }
    }
    // The time the check used: read once, so that the accuracy kept with it matches the index's.
    const applied = live.report(driverId, input, fix.at);
    if (applied) {
      state ??= this.remember(driverId);
      state.last = fix;
      state.pending = [];
    }
    return applied;
  }

  /** speed = (distance − both accuracies) / max(Δt, 1 s), at most MAX_PLAUSIBLE_SPEED. */
  private plausible(from: Fix, to: Fix): boolean {
    const meters = distanceMeters(from.lat, from.lng, to.lat, to.lng) - from.accuracy - to.accuracy;
    return meters / Math.max(Math.abs(to.at - from.at) / 1000, 1) <= this.maxMetersPerSecond!;
  }

  private remember(driverId: string): DriverState {
    const state: DriverState = { pending: [] };
    this.states.set(driverId, state);
    return state;
  }
}

const counted = (accuracy: number | undefined) => Math.min(accuracy ?? 0, MAX_COUNTED_ACCURACY_M);
