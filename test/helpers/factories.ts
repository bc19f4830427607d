// Test data factories: accounts with profiles and a live session (and its access token),
// written straight to the database so feature tests need not walk the login flow.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import argon2 from 'argon2';
import type { AccountStatus, OrderType, Role, VehicleType } from '../../src/db/schema.js';
import type { TestApp } from './app.js';

export const TEST_PASSWORD = 'correct-horse-battery-staple';
let passwordHash: Promise<string> | undefined;
const hashOnce = () =>
  (passwordHash ??= argon2.hash(TEST_PASSWORD, {
    type: argon2.argon2id,
    memoryCost: 19456,
    timeCost: 2,
    parallelism: 1,
  }));

let counter = 0;
/** A unique, valid E.164 number (Kenyan mobile range). */
export function uniquePhone(): string {
  counter += 1;
  const n = (Date.now() % 1_000_000) * 1000 + (process.pid % 10) * 100 + (counter % 100);
  return `+2547${String(n).padStart(8, '0').slice(-8)}`;
}

export interface CreateUserOptions {
  role?: Role;
  status?: AccountStatus;
  email?: string;
  phone?: string;
  firstName?: string;
  lastName?: string;
  countryCode?: string;
  driver?: {
    vehicleType?: VehicleType;
    vehiclePlate?: string;
    serviceTypes?: OrderType[];
    companyId?: string | null;
    availability?: 'ONLINE' | 'OFFLINE';
  };
  businessName?: string;
  companyName?: string;
  /** Create a session and access token (default true). */
  session?: boolean;
}

export interface TestUser {
  id: string;
  email: string;
  phone: string;
  role: Role;
  status: AccountStatus;
  countryId: string;
  sessionId: string;
  token: string;
  headers: { authorization: string };
}

export async function countryId(t: TestApp, code = 'KE'): Promise<string> {
  const row = await t.db.selectFrom('countries').select('id').where('code', '=', code).executeTakeFirstOrThrow();
  return row.id;
}

export async function createUser(t: TestApp, options: CreateUserOptions = {}): Promise<TestUser> {
  const role = options.role ?? 'CUSTOMER';
  const status = options.status ?? 'ACTIVE';
  const id = randomUUID();
  const email = options.email ?? `user-${id.slice(0, 8)}@example.com`;
  const phone = options.phone ?? uniquePhone();
  const country = await countryId(t, options.countryCode ?? 'KE');
  await t.db
    .insertInto('users')
    .values({
      id,
      email,
      phone,
      password_hash: await hashOnce(),
      first_name: options.firstName ?? 'Test',
      last_name: options.lastName ?? role.toLowerCase(),
      role,
      status,
      status_reason: null,
      country_id: country,
      is_phone_verified: true,
    })
    .execute();
  if (role === 'DRIVER') {
    const d = options.driver ?? {};
    await t.db
      .insertInto('driver_profiles')
      .values({
        user_id: id,
        vehicle_type: d.vehicleType ?? 'BIKE',
        vehicle_plate: d.vehiclePlate ?? `KAA ${id.slice(0, 4).toUpperCase()}`,
        company_id: d.companyId ?? null,
        service_types: d.serviceTypes ?? ['RIDE', 'PACKAGE_DELIVERY'],
        availability: d.availability ?? 'OFFLINE',
      })
      .execute();
  }
  if (role === 'BUSINESS') {
    await t.db
      .insertInto('business_profiles')
      .values({ user_id: id, business_name: options.businessName ?? 'Acme Deliveries', business_address: null })
      .execute();
  }
  if (role === 'COMPANY') {
    await t.db
      .insertInto('company_profiles')
      .values({ user_id: id, company_name: options.companyName ?? 'Fleet Co' })
      .execute();
  }

  let sessionId = '';
  let token = '';
  if (options.session !== false) {
    sessionId = randomUUID();
    await t.db
      .insertInto('auth_sessions')
      .values({
        id: sessionId,
        user_id: id,
        refresh_token_hash: createHash('sha256').update(randomBytes(16)).digest('hex'),
        remember_me: false,
        expires_at: new Date(t.clock.now().getTime() + 7 * 86_400_000),
        revoked_at: null,
        last_used_at: null,
      })
      .execute();
    token = (await t.tokens.signAccess({ userId: id, role, sessionId })).token;
  }
  return {
    id,
    email,
    phone,
    role,
    status,
    countryId: country,
    sessionId,
    token,
    headers: { authorization: `Bearer ${token}` },
  };
}
