// Shared bits of the package, ride and job tests.
import type { TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';

/** One user of each role given, created in that order. */
export async function createUsers(
  t: TestApp,
  roles: NonNullable<NonNullable<Parameters<typeof createUser>[1]>['role']>[],
): Promise<TestUser[]> {
  const users: TestUser[] = [];
  for (const role of roles) users.push(await createUser(t, { role }));
  return users;
}

export function stop(lat: number, lng: number, overrides: Record<string, unknown> = {}) {
  return {
    location: { lat, lng },
    address: 'Moi Avenue 1, Nairobi',
    contactName: 'Wanjiru',
    contactPhone: '+254712345678',
    ...overrides,
  };
}

export function packageBody(countryId: string, overrides: Record<string, unknown> = {}) {
  return {
    pickup: stop(-1.2864, 36.8172),
    dropoff: stop(-1.3, 36.8, { contactName: 'Otieno', contactPhone: '+254722000111', notes: 'Gate B' }),
    vehicleType: 'BIKE',
    countryId,
    parcel: { description: 'Documents', weightKg: 1.5, size: 'SMALL' },
    ...overrides,
  };
}

export function rideBody(countryId: string, overrides: Record<string, unknown> = {}) {
  return {
    pickupLocation: { lat: -1.2864, lng: 36.8172 },
    destinationLocation: { lat: -1.3, lng: 36.8 },
    vehicleType: 'CAR',
    countryId,
    ...overrides,
  };
}

export async function post(t: TestApp, url: string, headers: Record<string, string>, payload?: unknown) {
  return t.app.inject({
    method: 'POST',
    url,
    headers,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

export async function get(t: TestApp, url: string, headers: Record<string, string>) {
  return t.app.inject({ method: 'GET', url, headers });
}

export async function setDriverPosition(t: TestApp, driverId: string, lat: number, lng: number) {
  await t.db
    .updateTable('driver_profiles')
    .set({ last_lat: lat, last_lng: lng, last_location_at: t.clock.now(), availability: 'ONLINE' })
    .where('user_id', '=', driverId)
    .execute();
  // As another instance's change would arrive: the live index reads the driver again.
  await t.services.live.reload(driverId);
}

export const notFoundBody = (what: 'Package' | 'Ride') => ({
  statusCode: 404,
  message: `${what} not found`,
  error: 'Not Found',
  code: `${what.toUpperCase()}_NOT_FOUND`,
});
