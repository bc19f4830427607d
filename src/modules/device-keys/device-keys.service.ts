// Device keys (contract section 19): a driver makes a key for Traccar Client, which sends positions
// with it in the OsmAnd protocol. The key is random (192 bits), shown once, stored as its SHA-256
// hash. Lookups are cached for a minute at most, and a revocation drops the cached copy on every
// instance through the bus (nothing is cached while the bus may miss events). Every instance also
// knows which keys exist (the start of each live key's hash: loaded at start, kept current through
// the bus), so that the OsmAnd route tells a real key from a guess before any lookup.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Bus } from '../../shared/bus.js';
import type { Logger } from 'pino';
import type { Clock } from '../../shared/clock.js';
import { conflict, forbidden, notFound, unauthorized } from '../../shared/errors.js';
import type { DB } from '../../db/database.js';
import type { DeviceKeyRow, DeviceKeysRepository } from './device-keys.repository.js';

export const MAX_DEVICE_KEYS = 3;
/** How long a resolved key is trusted without asking the database again. */
export const DEVICE_KEY_CACHE_MS = 60_000;
const CACHE_MAX_ENTRIES = 50_000;
const KEY_PREFIX = 'dk_';
const KEY_FORMAT = /^dk_[A-Za-z0-9_-]{32}$/;
/** Hashes read per query when the set of live keys is loaded. */
const LOAD_PAGE = 10_000;

export const hashDeviceKey = (key: string) => createHash('sha256').update(key).digest('hex');
/**
 * What the set of live keys holds of a hash: its first 128 bits (half the memory of the whole hash;
 * the set only tells a real key from a guess, the lookup that follows compares the whole hash).
 */
const tagOf = (hash: string) => hash.slice(0, 32);

interface Cached {
  keyId: string;
  driverId: string;
  until: number;
}

export interface DeviceKeyOwner {
  keyId: string;
  driverId: string;
}

export class DeviceKeysService {
  private readonly cache = new Map<string, Cached>();
  private readonly unsubscribe: (() => void)[];
  /** Bumped by every invalidation: a lookup that raced one is not cached. */
  private generation = 0;
  /** The tags of every live key (undefined until loaded); at most 3 per driver. */
  private known: Set<string> | undefined;
  private loading: Promise<void> | undefined;
  /** Changes heard while a load runs, applied to what it read. */
  private journal: [add: boolean, tag: string][] | undefined;

  constructor(private readonly deps: { db: DB; repo: DeviceKeysRepository; clock: Clock; bus: Bus; logger?: Logger }) {
    const { bus } = deps;
    this.unsubscribe = [
      bus.subscribe('device-key.created', ({ tag }) => this.note(true, tag)),
      bus.subscribe('device-key.revoked', ({ keyId, tag }) => {
        this.forget((c) => c.keyId === keyId);
        if (tag !== undefined) this.note(false, tag);
      }),
      // Suspended, deleted or approved: the account's status is read again on the next position.
      bus.subscribe('user.changed', ({ userId }) => this.forget((c) => c.driverId === userId)),
      bus.subscribe('bus.resync', () => {
        this.generation += 1;
        this.cache.clear();
        // Keys made or revoked meanwhile were missed: all read again.
        if (this.known) void this.loadKnown().catch(() => undefined);
      }),
    ];
  }

  /** Loads the set of live keys (at start; after a failure, logged, the next OsmAnd request tries again). */
  async start(): Promise<void> {
    await this.loadKnown().catch((err: unknown) =>
      this.deps.logger?.warn({ err }, 'loading the device keys failed; tried again on the next position'),
    );
  }

  /** Whether the key (by its hash) is a live key as this instance knows them (the set is loaded on first use if start did not). */
  async isKnown(hash: string): Promise<boolean> {
    if (!this.known) await this.loadKnown();
    return this.known!.has(tagOf(hash));
  }

  async create(driverId: string, name: string | undefined) {
    const key = KEY_PREFIX + randomBytes(24).toString('base64url');
    const row = {
      id: randomUUID(),
      driver_id: driverId,
      name: name?.trim() || 'Traccar Client',
      key_hash: hashDeviceKey(key),
      created_at: this.deps.clock.now(),
    };
    await this.deps.db.transaction().execute(async (trx) => {
      if (!(await this.deps.repo.lockDriver(trx, driverId)))
        throw notFound('Driver profile not found', 'DRIVER_NOT_FOUND');
      if ((await this.deps.repo.countByDriver(trx, driverId)) >= MAX_DEVICE_KEYS) {
        throw conflict(`At most ${MAX_DEVICE_KEYS} device keys per driver: revoke one first`, 'DEVICE_KEY_LIMIT');
      }
      await this.deps.repo.insert(trx, row);
    });
    this.deps.bus.publish('device-key.created', { keyId: row.id, tag: tagOf(row.key_hash) });
    return { id: row.id, name: row.name, key, createdAt: row.created_at.toISOString() };
  }

  async list(driverId: string) {
    return { items: (await this.deps.repo.listByDriver(driverId)).map(toDeviceKeyResponse) };
  }

  async revoke(driverId: string, id: string): Promise<void> {
    const hash = await this.deps.repo.deleteOwn(driverId, id);
    if (hash === undefined) throw notFound('Device key not found', 'DEVICE_KEY_NOT_FOUND');
    // Here at once, on the other instances when the event reaches them.
    this.deps.bus.publish('device-key.revoked', { keyId: id, tag: tagOf(hash) });
  }

  /** Whether the key has the shape of the keys this service makes (checked before any counting or lookup). */
  static wellFormed(key: string): boolean {
    return KEY_FORMAT.test(key);
  }

  /**
   * The driver a well-formed key (by its hash) belongs to: 401 for an unknown or revoked key, 403 for
   * an account not ACTIVE.
   */
  async resolve(hash: string): Promise<DeviceKeyOwner> {
    const now = this.deps.clock.nowMs();
    const cached = this.cache.get(hash);
    if (cached && cached.until > now) return cached;
    const generation = this.generation;
    const owner = await this.deps.repo.getOwnerByHash(hash);
    if (!owner) {
      this.cache.delete(hash);
      // Revoked while this instance was not hearing the bus.
      this.note(false, tagOf(hash));
      throw unauthorized('Unknown device key', 'INVALID_DEVICE_KEY');
    }
    if (owner.status !== 'ACTIVE')
      throw forbidden('The account of this device key is not active', `ACCOUNT_${owner.status}`);
    // Touched once per cache period at most (and the row at most once a minute).
    void this.deps.repo.touch(owner.id, this.deps.clock.now()).catch(() => undefined);
    // Made while this instance was not hearing the bus.
    this.note(true, tagOf(hash));
    const entry = { keyId: owner.id, driverId: owner.driver_id, until: now + DEVICE_KEY_CACHE_MS };
    if (this.deps.bus.reliable && generation === this.generation) {
      if (this.cache.size >= CACHE_MAX_ENTRIES) this.cache.clear();
      this.cache.set(hash, entry);
    }
    return entry;
  }

  close(): void {
    this.unsubscribe.forEach((off) => off());
    this.cache.clear();
  }

  private loadKnown(): Promise<void> {
    this.loading ??= (async () => {
      const journal: [boolean, string][] = (this.journal = []);
      try {
        const known = new Set<string>();
        let after: string | undefined;
        for (;;) {
          const hashes = await this.deps.repo.listHashes(LOAD_PAGE, after);
          for (const hash of hashes) known.add(tagOf(hash));
          if (hashes.length < LOAD_PAGE) break;
          after = hashes[hashes.length - 1];
        }
        for (const [add, tag] of journal) {
          if (add) known.add(tag);
          else known.delete(tag);
        }
        this.known = known;
      } finally {
        this.journal = undefined;
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  private note(add: boolean, tag: string): void {
    this.journal?.push([add, tag]);
    if (add) this.known?.add(tag);
    else this.known?.delete(tag);
  }

  private forget(match: (c: Cached) => boolean): void {
    this.generation += 1;
    for (const [hash, c] of this.cache) if (match(c)) this.cache.delete(hash);
  }
}

export function toDeviceKeyResponse(row: DeviceKeyRow) {
  return {
    id: row.id,
    name: row.name,
    createdAt: new Date(row.created_at).toISOString(),
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
  };
}
