// Reading packages: GET /packages/:id from the read cache of the poll, the list, the business statement.
import { LRUCache } from 'lru-cache';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import { decodeCursor, toRowPage } from '../../shared/pagination.js';
import {
  canSee,
  moneyFields,
  packageNotFound,
  tipsFor,
  viewFor,
  slaFacts,
  type PackagePresenter,
  type SlaOf,
  type TrackingLinks,
} from './package-views.js';
import type { PackageJsonRow, PackagesRepository } from './packages.repository.js';
import type { PackageListQuery } from './packages.schemas.js';
import { buildStatement } from './statement.js';
import type { StatementQuery } from './statement.schemas.js';

/**
 * GET /packages/:id is polled hard by integrators, so each instance keeps recent answers. Every
 * change to a package drops it at once on every instance (bus 'job.changed', through Redis when
 * configured), so the lifetime only bounds what changes elsewhere: the assigned driver's position
 * (written behind about once a second), hence one second with a driver and 30 seconds without.
 */
const READ_CACHE_TTL_MS = 1000;
const READ_CACHE_TTL_NO_DRIVER_MS = 30_000;
const READ_CACHE_MAX = 20_000;

/** A package's JSON text with its tracking link added, and where the link starts (to leave it out). */
type ShownJsonRow = PackageJsonRow & { linkAt: number };

export class PackageReads {
  private readonly readCache = new LRUCache<string, { row: ShownJsonRow; readAt: number }>({
    max: READ_CACHE_MAX,
    ttl: READ_CACHE_TTL_NO_DRIVER_MS,
  });
  /** Bumped by every invalidation: a read that overlapped a change is not cached. */
  private cacheEpoch = 0;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly deps: {
      repo: PackagesRepository;
      bus: Bus;
      links: TrackingLinks;
      presenter: PackagePresenter;
      sla?: SlaOf;
    },
  ) {
    const offChanged = deps.bus.subscribe('job.changed', ({ jobType, jobId }) => {
      if (jobType !== 'PACKAGE') return;
      this.cacheEpoch += 1;
      this.readCache.delete(jobId);
    });
    // A tip or a rating changes what a package shows (the tip, the driver's rating).
    const offAnnotated = deps.bus.subscribe('job.annotated', ({ jobType, jobId }) => {
      if (jobType !== 'PACKAGE') return;
      this.cacheEpoch += 1;
      this.readCache.delete(jobId);
    });
    const offRotated = deps.bus.subscribe('tracking.rotated', ({ packageId }) => {
      this.cacheEpoch += 1;
      this.readCache.delete(packageId);
    });
    const offProof = deps.bus.subscribe('package.proof', ({ packageId }) => {
      this.cacheEpoch += 1;
      this.readCache.delete(packageId);
    });
    const offResync = deps.bus.subscribe('bus.resync', () => {
      this.cacheEpoch += 1;
      this.readCache.clear();
    });
    this.unsubscribe = () => {
      offChanged();
      offAnnotated();
      offRotated();
      offProof();
      offResync();
    };
  }

  close(): void {
    this.unsubscribe();
    this.readCache.clear();
  }

  /** The JSON text built by PostgreSQL, with the tracking link (derived from a secret) added here. */
  private withTrackingUrl(row: PackageJsonRow): ShownJsonRow {
    const url = JSON.stringify(this.deps.links.url(row.id, row.tracking_nonce));
    const linkAt = row.body.length - 1;
    return { ...row, body: `${row.body.slice(0, linkAt)},"trackingUrl":${url}}`, linkAt };
  }

  /** The cached text as this caller may read it (a company reading by id is always its driver's company). */
  private async jsonFor(row: ShownJsonRow, auth: AuthContext): Promise<string> {
    if (!canSee(row, auth)) throw packageNotFound();
    const tips = tipsFor([row], auth);
    // `sla` at the moment of the read, from the row's own columns (no other query: B4 stays as it was).
    const sla = this.deps.sla
      ? {
          sla: this.deps.sla(
            slaFacts({
              ...row,
              pickup: { lat: row.pickup_lat, lng: row.pickup_lng },
              dropoff: { lat: row.dropoff_lat, lng: row.dropoff_lng },
            }),
          ),
        }
      : {};
    const extra = Object.entries({
      ...sla,
      ...this.deps.presenter.moneyFor(row, auth),
      ...moneyFields(row, auth, tips),
    })
      .map(([key, value]) => `,"${key}":${JSON.stringify(value)}`)
      .join('');
    const head = row.body.slice(0, row.linkAt);
    return viewFor(row, auth) === 'FULL' ? `${head}${extra}${row.body.slice(row.linkAt)}` : `${head}${extra}}`;
  }

  /** GET /packages/:id: the package as JSON text (see PACKAGE_JSON_BY_IDS), from the read cache when it can. */
  async getJson(id: string, auth: AuthContext): Promise<string> {
    const cached = this.readCache.get(id);
    // While changes elsewhere may go unannounced (Redis away), only an entry read within the last second serves.
    if (cached && (this.deps.bus.reliable || performance.now() - cached.readAt <= READ_CACHE_TTL_MS))
      return this.jsonFor(cached.row, auth);
    const epoch = this.cacheEpoch;
    const readAt = performance.now();
    const stored = await this.deps.repo.loadJson(id);
    if (!stored) throw packageNotFound();
    const row = this.withTrackingUrl(stored);
    // (The cache's lifetimes run on a monotonic clock; business time is deps.clock.)
    if (epoch === this.cacheEpoch)
      this.readCache.set(id, { row, readAt }, { ttl: row.driver_id ? READ_CACHE_TTL_MS : READ_CACHE_TTL_NO_DRIVER_MS });
    return this.jsonFor(row, auth);
  }

  async list(auth: AuthContext, query: PackageListQuery) {
    const limit = query.limit ?? 20;
    const rows = await this.deps.repo.list(auth, { status: query.status, cursor: decodeCursor(query.cursor), limit });
    // The query returns only what the caller may list (a company: its drivers' packages, and the PENDING ones of its country).
    return toRowPage(rows, limit, (r) => this.deps.presenter.present(r, auth, viewFor(r, auth)));
  }

  /** GET /businesses/me/statement: the caller's own packages only. */
  statement(auth: AuthContext, query: StatementQuery) {
    return buildStatement(this.deps.repo, auth.userId, query);
  }
}
