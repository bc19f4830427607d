// Registration and login with a code (contract section 4), over the codes, passwords and sessions parts.
import type { Locale } from '../../shared/locales.js';
import type { DB } from '../../db/database.js';
import type { OrderType, Role, VehicleType } from '../../db/schema.js';
import { STATUS_MESSAGES } from '../../shared/auth-context.js';
import { forbidden, unauthorized } from '../../shared/errors.js';
import { assertValidAccountFields, assertValidPhone, type AccountService } from './accounts.service.js';
import { sessionInvalid, type CodesService } from './codes.service.js';
import { hashPassword } from './passwords.js';
import type { PasswordService } from './passwords.service.js';
import type { IssuedTokens, SessionsService } from './sessions.service.js';
import type { UsersRepository } from './users.repository.js';
import { toUserResponse, type UserResponse } from './users.schemas.js';

// bench/lib/server.ts hashes refresh tokens with it, imported from here.
export { sha256 } from './sessions.service.js';

export interface AuthServiceDeps {
  /** For the registration's transaction (the code consumed and the account created together). */
  db: DB;
  users: UsersRepository;
  accounts: AccountService;
  codes: CodesService;
  passwords: PasswordService;
  sessions: SessionsService;
}

export interface RegisterInput {
  sessionId: string;
  phone: string;
  code: string;
  email: string;
  password: string;
  firstName: string;
  lastName: string;
  role: Exclude<Role, 'ADMIN'>;
  countryId: string;
  rememberMe?: boolean;
  businessName?: string;
  businessAddress?: string;
  companyName?: string;
  vehicleType?: VehicleType;
  vehiclePlate?: string;
  companyId?: string;
  serviceTypes?: OrderType[];
}

export class AuthService {
  constructor(private readonly deps: AuthServiceDeps) {}

  async sendRegisterOtp(phone: string): Promise<{ sessionId: string; phone: string }> {
    assertValidPhone(phone);
    await this.deps.accounts.assertIdentifiersFree(this.deps.db, undefined, phone);
    const sessionId = await this.deps.codes.start('REGISTER', phone, null);
    return { sessionId, phone };
  }

  async register(input: RegisterInput): Promise<{ user: UserResponse; tokens?: IssuedTokens }> {
    const { sessionId, code, rememberMe, ...fields } = input;
    const account = {
      ...fields,
      status: input.role === 'CUSTOMER' ? ('ACTIVE' as const) : ('PENDING_APPROVAL' as const),
    };
    assertValidAccountFields(account);
    const row = await this.deps.codes.check(sessionId, input.phone, code, 'REGISTER');
    const passwordHash = await hashPassword(input.password);
    const user = await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.codes.consume(trx, row);
      return this.deps.accounts.createAccount({ ...account, isPhoneVerified: true }, { trx, passwordHash });
    });
    if (user.status !== 'ACTIVE') return { user: toUserResponse(user) };
    return {
      user: toUserResponse(user),
      tokens: await this.deps.sessions.create(user.id, user.role, rememberMe ?? false),
    };
  }

  async login(identifier: string, password: string, rememberMe = false): Promise<{ sessionId: string; phone: string }> {
    const user = await this.deps.passwords.checkLogin(identifier, password);
    if (user.status !== 'ACTIVE') throw forbidden(STATUS_MESSAGES[user.status], `ACCOUNT_${user.status}`);
    const sessionId = await this.deps.codes.start('LOGIN', user.phone, user.id, rememberMe);
    return { sessionId, phone: user.phone };
  }

  async verifyLoginOtp(sessionId: string, phone: string, code: string): Promise<IssuedTokens & { user: UserResponse }> {
    const row = await this.deps.codes.check(sessionId, phone, code, 'LOGIN');
    await this.deps.codes.consume(this.deps.db, row);
    const user = await this.deps.users.markPhoneVerified(row.user_id!);
    if (!user) throw sessionInvalid();
    if (user.status !== 'ACTIVE') throw forbidden(STATUS_MESSAGES[user.status], `ACCOUNT_${user.status}`);
    const tokens = await this.deps.sessions.create(user.id, user.role, row.remember_me);
    return { ...tokens, user: toUserResponse(user) };
  }

  async me(userId: string): Promise<UserResponse> {
    const user = await this.deps.users.getById(userId);
    if (!user) throw unauthorized('Session has been revoked', 'SESSION_REVOKED');
    return toUserResponse(user);
  }

  /** The user's own settings (contract section 27: the language). */
  async updateMe(userId: string, change: { locale?: Locale | null }): Promise<UserResponse> {
    const user =
      change.locale === undefined
        ? await this.deps.users.getById(userId)
        : await this.deps.users.setLocale(userId, change.locale);
    if (!user) throw unauthorized('Session has been revoked', 'SESSION_REVOKED');
    return toUserResponse(user);
  }

  /** The periodic purge of spent codes (background.ts calls it here). */
  purgeExpired(): Promise<{ codeSteps: number; sends: number }> {
    return this.deps.codes.purgeExpired();
  }
}
