// A position from Traccar Client (OsmAnd protocol, contract section 19): the device key checked and
// limited, the request decoded, then the position handed to the drivers' position intake (the
// WebSocket's checks and pipeline).
//
// The route is outside the global per-IP limit, so made-up keys count per address against the global
// limit's numbers and an address beyond them is refused before any lookup. A live key is never
// refused for its address: carrier-grade NAT puts many drivers behind one, and a guesser there must
// not lock them all out. Every instance knows the live keys (DeviceKeysService.isKnown), so this holds
// on an instance that has never seen the key and after its cached lookup lapsed.
import { badRequest, tooManyRequests, unauthorized } from '../../shared/errors.js';
import type { Clock } from '../../shared/clock.js';
import type { KeyedLimit } from '../../http/rate-limit.js';
import type { PositionIntake } from '../drivers/position-intake.js';
import type { LiveDrivers } from '../matching/live-drivers.js';
import { DeviceKeysService, hashDeviceKey } from './device-keys.service.js';
import { decodeJson, decodeParams, deviceKeyOf } from './osmand-decode.js';

type Limiter = (key: string) => Promise<KeyedLimit>;

/** Addresses remembered as blocked at most (a flood of addresses clears the list rather than growing it). */
const MAX_BLOCKED = 100_000;

interface OsmAndRequest {
  query: Record<string, unknown>;
  body: unknown;
  /** The client's address as the rate limits count it (clientKey). */
  address: string;
}

export class OsmAndIntake {
  /** Address → until when (clock ms) its made-up keys are refused without a lookup. */
  private readonly blocked = new Map<string, number>();

  constructor(
    private readonly deps: {
      deviceKeys: DeviceKeysService;
      live: LiveDrivers;
      positions: PositionIntake;
      clock: Clock;
      /** Per device key (RATE_LIMIT_OSMAND); none when off. */
      perKey?: Limiter;
      /** Unknown keys per address, with the global limit's numbers (RATE_LIMIT_GLOBAL); none when off. */
      unknownKeys?: Limiter;
    },
  ) {}

  /** Takes one request's position; `limited` hears the per-key limit's state (for its headers). Throws the answer's error. */
  async receive(request: OsmAndRequest, limited?: (limit: KeyedLimit) => void): Promise<void> {
    const { query, body, address } = request;
    const { deviceKeys, perKey } = this.deps;
    const key = deviceKeyOf(body, query);
    if (key === undefined) throw unauthorized('Missing device key (id)', 'MISSING_DEVICE_KEY');
    if (!DeviceKeysService.wellFormed(key)) {
      await this.countUnknown(address);
      throw unauthorized('Unknown device key', 'INVALID_DEVICE_KEY');
    }
    const hash = hashDeviceKey(key);
    // A live key is resolved whatever its address's state; any other is refused once the address is blocked.
    if (!(await deviceKeys.isKnown(hash))) this.refuseIfBlocked(address);
    // Counted per key, before the database is asked (the route is outside the global per-IP limit).
    if (perKey) {
      const limit = await perKey(hash);
      limited?.(limit);
      if (!limit.allowed)
        throw tooManyRequests(
          `Too many positions for this device key; retry in ${Math.max(1, limit.resetSeconds)} seconds`,
          limit.resetSeconds,
        );
    }
    const owner = await deviceKeys.resolve(hash).catch(async (err: { statusCode?: number }) => {
      if (err.statusCode === 401) await this.countUnknown(address);
      throw err;
    });
    const isJson =
      !!body && typeof body === 'object' && !Array.isArray(body) && ('location' in body || 'device_id' in body);
    const decoded = isJson
      ? decodeJson(body as Record<string, unknown>, query)
      : decodeParams({ ...query, ...(body && typeof body === 'object' ? (body as Record<string, unknown>) : {}) });
    if (!decoded.ok) throw badRequest(decoded.message);
    if (!(await this.deps.live.ensure(owner.driverId))) throw unauthorized('Unknown device key', 'INVALID_DEVICE_KEY');
    const outcome = this.deps.positions.accept(owner.driverId, decoded.message, 'osmand', 'position');
    if (!outcome.ok) throw badRequest(outcome.message);
  }

  private refuseIfBlocked(address: string): void {
    const until = this.blocked.get(address);
    if (until === undefined) return;
    const left = until - this.deps.clock.nowMs();
    if (left > 0)
      throw tooManyRequests(
        `Too many unknown device keys from this address; retry in ${Math.ceil(left / 1000)} seconds`,
        left / 1000,
      );
    this.blocked.delete(address);
  }

  private async countUnknown(address: string): Promise<void> {
    if (!this.deps.unknownKeys) return;
    const limit = await this.deps.unknownKeys(address);
    // Its allowance used up: the next lookup from there is refused.
    if (!limit.allowed || limit.remaining === 0) {
      if (this.blocked.size >= MAX_BLOCKED) this.blocked.clear();
      this.blocked.set(address, this.deps.clock.nowMs() + Math.max(1, limit.resetSeconds) * 1000);
    }
  }
}
