// find-drivers (contract section 8): who may ask, for whom, and the nearest eligible drivers of the live index.
import type { DB } from '../../db/database.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Clock } from '../../shared/clock.js';
import { forbidden, notFound } from '../../shared/errors.js';
import type { UsersRepository } from '../auth/users.repository.js';
import type { CountriesRepository } from '../countries/countries.repository.js';
import type { DriverIndex, NearestResult } from './driver-index.js';
import { DEFAULT_LIMIT, DEFAULT_RADIUS_METERS, type FindDriversBody } from './matching.schemas.js';

const COUNTRY_CACHE_MS = 60_000;

export class MatchingService {
  // Countries are reference data: remember the ones that exist for a minute (never the misses).
  private readonly knownCountries = new Map<string, number>();

  constructor(
    private readonly deps: {
      db: DB;
      index: DriverIndex;
      clock: Clock;
      driverLocationTtlMs: number;
      users: UsersRepository;
      countries: CountriesRepository;
    },
  ) {}

  async findDrivers(
    body: FindDriversBody,
    auth: AuthContext,
  ): Promise<{ found: NearestResult[]; radiusMeters: number }> {
    const { deps } = this;
    if (body.customerId !== undefined) {
      if (auth.role === 'CUSTOMER' && body.customerId !== auth.userId) {
        throw forbidden('A customer may only find drivers for itself', 'CUSTOMER_MISMATCH');
      }
      // A customer naming itself was already checked by the guard (it exists, is ACTIVE, is a CUSTOMER).
      if (body.customerId !== auth.userId && (await deps.users.getById(body.customerId))?.role !== 'CUSTOMER') {
        throw notFound('Customer not found', 'CUSTOMER_NOT_FOUND');
      }
    }
    if (body.countryId !== undefined && !(await this.countryExists(body.countryId))) {
      throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
    }
    const radiusMeters = body.radiusMeters ?? DEFAULT_RADIUS_METERS;
    const found = deps.index.nearest({
      lat: body.pickupLocation.lat,
      lng: body.pickupLocation.lng,
      radiusMeters,
      limit: body.limit ?? DEFAULT_LIMIT,
      vehicleType: body.vehicleType,
      orderType: body.orderType,
      countryId: body.countryId,
      staleBefore: deps.clock.now().getTime() - deps.driverLocationTtlMs,
    });
    return { found, radiusMeters };
  }

  private async countryExists(id: string): Promise<boolean> {
    const now = this.deps.clock.now().getTime();
    const until = this.knownCountries.get(id);
    if (until !== undefined && until > now) return true;
    const exists = await this.deps.countries.exists(this.deps.db, id);
    if (exists) this.knownCountries.set(id, now + COUNTRY_CACHE_MS);
    return exists;
  }
}
