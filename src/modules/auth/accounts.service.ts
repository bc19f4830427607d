// Creating accounts with their role profiles: public registration, admin creation, bootstrap and CLI.
import { randomUUID } from 'node:crypto';
import type { Insertable, Transaction } from 'kysely';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import type { DB } from '../../db/database.js';
import type { Executor } from '../../db/executor.js';
import type {
  AccountStatus,
  BusinessProfilesTable,
  CompanyProfilesTable,
  Database,
  DriverProfilesTable,
  OrderType,
  Role,
  VehicleType,
} from '../../db/schema.js';
import type { Clock } from '../../shared/clock.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import type { CountriesRepository } from '../countries/countries.repository.js';
import { assertAcceptablePassword, hashPassword } from './passwords.js';
import type { UsersRepository } from './users.repository.js';
import type { UserRow } from './users.schemas.js';

export interface NewAccount {
  email: string;
  phone: string;
  password: string;
  firstName: string;
  lastName: string;
  role: Role;
  status: AccountStatus;
  countryId?: string | null;
  isPhoneVerified?: boolean;
  businessName?: string;
  businessAddress?: string;
  companyName?: string;
  vehicleType?: VehicleType;
  vehiclePlate?: string;
  companyId?: string;
  serviceTypes?: OrderType[];
}

const ROLE_FIELDS: Record<Role, { required: (keyof NewAccount)[]; optional: (keyof NewAccount)[] }> = {
  CUSTOMER: { required: [], optional: [] },
  ADMIN: { required: [], optional: [] },
  BUSINESS: { required: ['businessName'], optional: ['businessAddress'] },
  COMPANY: { required: ['companyName'], optional: [] },
  DRIVER: { required: ['vehicleType', 'vehiclePlate'], optional: ['companyId', 'serviceTypes'] },
};
const ALL_ROLE_FIELDS: (keyof NewAccount)[] = [
  'businessName',
  'businessAddress',
  'companyName',
  'vehicleType',
  'vehiclePlate',
  'companyId',
  'serviceTypes',
];

export function assertValidPhone(phone: string, field = 'phone'): void {
  const parsed = /^\+[1-9]\d{6,14}$/.test(phone) ? parsePhoneNumberFromString(phone) : undefined;
  if (!parsed || !parsed.isValid() || parsed.number !== phone) {
    throw badRequest(
      `body.${field} must be a valid phone number in international format (E.164, e.g. +254712345678)`,
      'INVALID_PHONE',
    );
  }
}

export function normalizeEmail(email: string): string {
  return email.trim();
}

/** Checks everything that can be checked without the database: phone, password, role fields. */
export function assertValidAccountFields(input: NewAccount): void {
  assertValidPhone(input.phone);
  assertAcceptablePassword(input.password);
  const rules = ROLE_FIELDS[input.role];
  for (const field of rules.required) {
    if (input[field] === undefined) throw badRequest(`body.${field} is required for role ${input.role}`);
  }
  for (const field of ALL_ROLE_FIELDS) {
    if (input[field] !== undefined && !rules.required.includes(field) && !rules.optional.includes(field)) {
      throw badRequest(`body.${field} is not allowed for role ${input.role}`);
    }
  }
  if (input.serviceTypes && input.serviceTypes.length === 0) throw badRequest('body.serviceTypes must not be empty');
}

/**
 * Where a registration writes the account's role profile, in its transaction: profiles' repository
 * (profiles/ owns those tables), handed in by services.ts; a port, so that auth imports no profiles code.
 */
export interface RoleProfiles {
  insertBusiness(db: Executor, row: Insertable<BusinessProfilesTable>): Promise<void>;
  insertCompany(db: Executor, row: Insertable<CompanyProfilesTable>): Promise<void>;
  insertDriver(db: Executor, row: Insertable<DriverProfilesTable>): Promise<void>;
}

export class AccountService {
  constructor(
    private readonly deps: {
      /** For the transaction that creates a user and its profile together. */
      db: DB;
      clock: Clock;
      users: UsersRepository;
      countries: CountriesRepository;
      profiles: RoleProfiles;
    },
  ) {}

  async assertCanCreate(db: Executor, input: NewAccount): Promise<void> {
    if (input.countryId && !(await this.deps.countries.exists(db, input.countryId))) {
      throw notFound('Country not found', 'COUNTRY_NOT_FOUND');
    }
    if (input.companyId && !(await this.deps.users.getActiveCompanyId(db, input.companyId))) {
      throw notFound('Company not found', 'COMPANY_NOT_FOUND');
    }
    await this.assertIdentifiersFree(db, input.email, input.phone);
  }

  async assertIdentifiersFree(db: Executor, email: string | undefined, phone: string | undefined): Promise<void> {
    if (email !== undefined && (await this.deps.users.getIdByEmail(db, email))) {
      throw conflict('E-mail is already registered', 'EMAIL_TAKEN');
    }
    if (phone !== undefined && (await this.deps.users.getIdByPhone(db, phone))) {
      throw conflict('Phone number is already registered', 'PHONE_TAKEN');
    }
  }

  /**
   * Validates and creates the user and its profile in one transaction (or inside `trx`). Callers
   * that hold a transaction pass a precomputed `passwordHash`, so no transaction waits on argon2.
   */
  async createAccount(
    input: NewAccount,
    options: { trx?: Transaction<Database>; passwordHash?: string } = {},
  ): Promise<UserRow> {
    assertValidAccountFields(input);
    const { trx } = options;
    const passwordHash = options.passwordHash ?? (await hashPassword(input.password));
    const run = async (tx: Transaction<Database>) => {
      await this.assertCanCreate(tx, input);
      const id = randomUUID();
      const now = this.deps.clock.now();
      const { users, profiles } = this.deps;
      let user: UserRow;
      try {
        user = await users.insert(tx, {
          id,
          email: normalizeEmail(input.email),
          phone: input.phone,
          password_hash: passwordHash,
          first_name: input.firstName,
          last_name: input.lastName,
          role: input.role,
          status: input.status,
          status_reason: null,
          country_id: input.countryId ?? null,
          is_phone_verified: input.isPhoneVerified ?? false,
          created_at: now,
          updated_at: now,
        });
      } catch (err) {
        throw uniqueViolation(err) ?? err;
      }
      if (input.role === 'BUSINESS') {
        await profiles.insertBusiness(tx, {
          user_id: id,
          business_name: input.businessName!,
          business_address: input.businessAddress ?? null,
        });
      } else if (input.role === 'COMPANY') {
        await profiles.insertCompany(tx, { user_id: id, company_name: input.companyName! });
      } else if (input.role === 'DRIVER') {
        await profiles.insertDriver(tx, {
          user_id: id,
          vehicle_type: input.vehicleType!,
          vehicle_plate: input.vehiclePlate!,
          company_id: input.companyId ?? null,
          service_types: [...new Set<OrderType>(input.serviceTypes ?? ['RIDE', 'PACKAGE_DELIVERY'])],
        });
      }
      return user;
    };
    return trx ? run(trx) : this.deps.db.transaction().execute(run);
  }
}

/** A concurrent insert that won the race on e-mail or phone becomes the same 409 as the pre-check. */
function uniqueViolation(err: unknown) {
  const e = err as { code?: string; constraint?: string; message?: string; detail?: string };
  if (e?.code !== '23505') return undefined;
  const text = `${e.constraint ?? ''} ${e.message ?? ''} ${e.detail ?? ''}`;
  if (/email/i.test(text)) return conflict('E-mail is already registered', 'EMAIL_TAKEN');
  return conflict('Phone number is already registered', 'PHONE_TAKEN');
}
