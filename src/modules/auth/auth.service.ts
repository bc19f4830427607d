// The rules of registration, login with a code, sessions, refresh, logout and passwords (contract section 4).
import { createHash, createHmac, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { sql, type Selectable, type Transaction } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Config } from '../../config.js';
import type { DB } from '../../db/database.js';
import type { Database, OrderType, Role, VehicleType } from '../../db/schema.js';
import { STATUS_MESSAGES } from '../../shared/auth-context.js';
import type { SmsSender } from '../../sms/sms.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, forbidden, tooManyRequests, unauthorized } from '../../shared/errors.js';
import { assertValidAccountFields, assertValidPhone, type AccountService } from './accounts.service.js';
import type { OtpPurpose, OtpSessionsTable } from '../../db/tables/auth.js';
import { assertAcceptablePassword, hashPassword, verifyAgainstDummy, verifyPassword } from './passwords.js';
import type { TokenService } from './tokens.js';
import { USER_COLUMNS, toUserResponse, type UserResponse } from './users.schemas.js';

export const MAX_WRONG_PASSWORDS = 10;
export const PASSWORD_LOCK_MS = 15 * 60_000;
export const MAX_CODES_PER_PHONE_PER_HOUR = 10;
const HOUR_MS = 3_600_000;

type AuthConfig = Pick<
  Config,
  | 'refreshTokenTtlMs'
  | 'rememberMeRefreshTokenTtlMs'
  | 'loginSessionTtlMs'
  | 'otpTtlMs'
  | 'otpMaxAttempts'
  | 'otpMaxResends'
>;

export interface AuthServiceDeps {
  db: DB;
  clock: Clock;
  config: AuthConfig;
  /** Key for the HMAC under which codes are stored (derived from the JWT secret). */
  codeKey: string;
  tokens: TokenService;
  bus: Bus;
  sms: SmsSender;
  accounts: AccountService;
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

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
}

type OtpRow = Selectable<OtpSessionsTable>;

const sessionInvalid = () =>
  unauthorized('Verification session is invalid or has expired; start again', 'OTP_SESSION_INVALID');
const invalidCredentials = () => unauthorized('Invalid credentials', 'INVALID_CREDENTIALS');

function humanDuration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes >= 1) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  return `${Math.max(1, Math.round(ms / 1000))} seconds`;
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * `+*******78`: only the last two digits, behind a mask of fixed width, so the answer for an unknown
 * e-mail (made-up digits) cannot be told from a real one by its country code or its length.
 */
export function maskPhone(phone: string): string {
  return `+*******${phone.slice(-2)}`;
}

export class AuthService {
  /**
   * Wrong passwords for identifiers that match no account, counted like an account's, so that the
   * lockout answers the same whether or not the account exists (per instance: no table to fill).
   */
  private readonly unknownFailures = new LRUCache<string, { count: number; lockedUntil: number }>({ max: 100_000, ttl: PASSWORD_LOCK_MS * 2 });
  constructor(private readonly deps: AuthServiceDeps) {}

  private now(): Date {
    return this.deps.clock.now();
  }

  // ---- codes ---------------------------------------------------------------------------------

  private codeHash(sessionId: string, code: string): string {
    return createHmac('sha256', this.deps.codeKey).update(`${sessionId}:${code}`).digest('hex');
  }

  /** Enforces the per-phone hourly cap and records one more code sent to `phone`. */
  private async reserveCode(phone: string): Promise<void> {
    const now = this.now();
    const since = new Date(now.getTime() - HOUR_MS);
    const sent = await this.deps.db
      .selectFrom('otp_sends')
      .select(['sent_at'])
      .where('phone', '=', phone)
      .where('sent_at', '>', since)
      .orderBy('sent_at', 'asc')
      .execute();
    if (sent.length >= MAX_CODES_PER_PHONE_PER_HOUR) {
      const retryMs = new Date(sent[sent.length - MAX_CODES_PER_PHONE_PER_HOUR].sent_at).getTime() + HOUR_MS - now.getTime();
      throw tooManyRequests('Too many codes sent to this phone number; try again later', retryMs / 1000, 'OTP_PHONE_LIMIT');
    }
    await this.deps.db.deleteFrom('otp_sends').where('phone', '=', phone).where('sent_at', '<=', since).execute();
    await this.deps.db.insertInto('otp_sends').values({ id: randomUUID(), phone, sent_at: now }).execute();
  }

  /**
   * Deletes what no request can use any more: code steps past their end, and sends older than the
   * hourly window (a phone's own old sends also go when it gets a new code). Run by a periodic sweep.
   */
  async purgeExpired(): Promise<{ codeSteps: number; sends: number }> {
    const now = this.now();
    const steps = await this.deps.db.deleteFrom('otp_sessions').where('expires_at', '<=', now).executeTakeFirst();
    const sends = await this.deps.db.deleteFrom('otp_sends').where('sent_at', '<=', new Date(now.getTime() - HOUR_MS)).executeTakeFirst();
    return { codeSteps: Number(steps.numDeletedRows), sends: Number(sends.numDeletedRows) };
  }

  private newCode(): string {
    return String(randomInt(0, 1_000_000)).padStart(6, '0');
  }

  private async sendCode(phone: string, code: string, purpose: OtpPurpose): Promise<void> {
    const what = purpose === 'PASSWORD_RESET' ? 'password reset' : purpose === 'REGISTER' ? 'registration' : 'login';
    await this.deps.sms.send(phone, `Your ${what} code is ${code}. It expires in ${humanDuration(this.deps.config.otpTtlMs)}.`);
  }

  /**
   * Stores a code step and sends its code. With `userId` null and `send` false (a password reset for
   * no account) the step is stored with a hash that no code matches and nothing is sent, so that the
   * next steps answer exactly as for a real account and can never succeed.
   */
  private async startCodeStep(purpose: OtpPurpose, phone: string, userId: string | null, rememberMe = false, send = true): Promise<string> {
    await this.reserveCode(phone);
    const id = randomUUID();
    const code = send ? this.newCode() : randomUUID();
    const now = this.now();
    await this.deps.db
      .insertInto('otp_sessions')
      .values({
        id,
        purpose,
        user_id: userId,
        phone,
        code_hash: this.codeHash(id, code),
        code_expires_at: new Date(now.getTime() + this.deps.config.otpTtlMs),
        remember_me: rememberMe,
        expires_at: new Date(now.getTime() + this.deps.config.loginSessionTtlMs),
        consumed_at: null,
        created_at: now,
      })
      .execute();
    if (!send) return id;
    // A provider's round trip would time a reset apart from one for no account: it is not awaited.
    if (purpose === 'PASSWORD_RESET' && !this.deps.sms.local) void this.sendCode(phone, code, purpose).catch(() => undefined);
    else await this.sendCode(phone, code, purpose);
    return id;
  }

  private async openCodeSession(sessionId: string, phone: string, purpose: OtpPurpose): Promise<OtpRow> {
    const row = await this.deps.db
      .selectFrom('otp_sessions')
      .selectAll()
      .where('id', '=', sessionId)
      .where('purpose', '=', purpose)
      .executeTakeFirst();
    const phoneOk = row && (phone === row.phone || (purpose === 'PASSWORD_RESET' && phone === maskPhone(row.phone)));
    if (!row || !phoneOk || row.consumed_at !== null || new Date(row.expires_at) <= this.now()) throw sessionInvalid();
    if (row.attempts >= this.deps.config.otpMaxAttempts) {
      throw unauthorized('Too many wrong codes; start again', 'OTP_ATTEMPTS_EXCEEDED');
    }
    return row;
  }

  /**
   * Checks a code (constant-time) and counts a wrong one; the caller then consumes the session
   * with `consumeCode`, in the transaction that acts on it.
   */
  private async checkCode(sessionId: string, phone: string, code: string, purpose: OtpPurpose): Promise<OtpRow> {
    const row = await this.openCodeSession(sessionId, phone, purpose);
    const given = Buffer.from(this.codeHash(row.id, code), 'hex');
    const stored = Buffer.from(row.code_hash, 'hex');
    if (given.length !== stored.length || !timingSafeEqual(given, stored)) {
      const updated = await this.deps.db
        .updateTable('otp_sessions')
        .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
        .where('id', '=', row.id)
        .returning('attempts')
        .executeTakeFirst();
      if (updated && updated.attempts >= this.deps.config.otpMaxAttempts) {
        throw unauthorized('Too many wrong codes; start again', 'OTP_ATTEMPTS_EXCEEDED');
      }
      throw unauthorized('Invalid code', 'INVALID_OTP');
    }
    if (new Date(row.code_expires_at) <= this.now()) throw unauthorized('Code has expired; request a new one', 'OTP_EXPIRED');
    return row;
  }

  /** Marks a checked code used; only one caller can win (single use under concurrency). */
  private async consumeCode(row: OtpRow, db: DB | Transaction<Database> = this.deps.db): Promise<void> {
    const consumed = await db
      .updateTable('otp_sessions')
      .set({ consumed_at: this.now() })
      .where('id', '=', row.id)
      .where('consumed_at', 'is', null)
      .where('code_hash', '=', row.code_hash)
      .where('attempts', '<', this.deps.config.otpMaxAttempts)
      .returning('id')
      .executeTakeFirst();
    if (!consumed) throw sessionInvalid();
  }

  // ---- registration ----------------------------------------------------------------------------

  async sendRegisterOtp(phone: string): Promise<{ sessionId: string; phone: string }> {
    assertValidPhone(phone);
    await this.deps.accounts.assertIdentifiersFree(undefined, phone);
    const sessionId = await this.startCodeStep('REGISTER', phone, null);
    return { sessionId, phone };
  }

  async register(input: RegisterInput): Promise<{ user: UserResponse; tokens?: IssuedTokens }> {
    const { sessionId, code, rememberMe, ...fields } = input;
    const account = { ...fields, status: input.role === 'CUSTOMER' ? ('ACTIVE' as const) : ('PENDING_APPROVAL' as const) };
    assertValidAccountFields(account);
    const row = await this.checkCode(sessionId, input.phone, code, 'REGISTER');
    const passwordHash = await hashPassword(input.password);
    const user = await this.deps.db.transaction().execute(async (trx) => {
      await this.consumeCode(row, trx);
      return this.deps.accounts.createAccount({ ...account, isPhoneVerified: true }, { trx, passwordHash });
    });
    if (user.status !== 'ACTIVE') return { user: toUserResponse(user) };
    return { user: toUserResponse(user), tokens: await this.createSession(user.id, user.role, rememberMe ?? false) };
  }

  // ---- login -----------------------------------------------------------------------------------

  private findByIdentifier(identifier: string) {
    const query = this.deps.db
      .selectFrom('users')
      .select(['id', 'phone', 'password_hash', 'status', 'role', 'locked_until', 'failed_login_count']);
    return (
      identifier.includes('@')
        ? query.where(sql`lower(email)`, '=', identifier.trim().toLowerCase())
        : query.where('phone', '=', identifier.trim())
    ).executeTakeFirst();
  }

  private assertNotLocked(user: { locked_until: Date | null }): void {
    const lockedFor = user.locked_until ? new Date(user.locked_until).getTime() - this.now().getTime() : 0;
    if (lockedFor > 0) {
      throw tooManyRequests('Too many wrong passwords; this account is locked for a while', lockedFor / 1000, 'ACCOUNT_LOCKED');
    }
  }

  /** The lockout of section 4 for an identifier with no account: the same answers, the same work. */
  private async unknownIdentifierAttempt(identifier: string, password: string): Promise<void> {
    const key = identifier.trim().toLowerCase();
    const now = this.now().getTime();
    const state = this.unknownFailures.get(key) ?? { count: 0, lockedUntil: 0 };
    this.assertNotLocked({ locked_until: state.lockedUntil > now ? new Date(state.lockedUntil) : null });
    await verifyAgainstDummy(password);
    state.count += 1;
    if (state.count >= MAX_WRONG_PASSWORDS) {
      state.count = 0;
      state.lockedUntil = now + PASSWORD_LOCK_MS;
    }
    this.unknownFailures.set(key, state);
  }

  /** Counts a wrong password; the MAX_WRONG_PASSWORDS-th in a row locks the password step. */
  private async recordWrongPassword(userId: string): Promise<void> {
    const lockUntil = new Date(this.now().getTime() + PASSWORD_LOCK_MS);
    await this.deps.db
      .updateTable('users')
      .set({
        failed_login_count: sql`case when failed_login_count + 1 >= ${MAX_WRONG_PASSWORDS} then 0 else failed_login_count + 1 end`,
        locked_until: sql`case when failed_login_count + 1 >= ${MAX_WRONG_PASSWORDS} then ${lockUntil}::timestamptz else locked_until end`,
      })
      .where('id', '=', userId)
      .execute();
  }

  private async checkPassword(user: { id: string; password_hash: string; locked_until: Date | null; failed_login_count: number }, password: string) {
    this.assertNotLocked(user);
    if (!(await verifyPassword(user.password_hash, password))) {
      await this.recordWrongPassword(user.id);
      return false;
    }
    if (user.failed_login_count > 0) {
      await this.deps.db.updateTable('users').set({ failed_login_count: 0 }).where('id', '=', user.id).execute();
    }
    return true;
  }

  async login(identifier: string, password: string, rememberMe = false): Promise<{ sessionId: string; phone: string }> {
    const user = await this.findByIdentifier(identifier);
    if (!user) {
      await this.unknownIdentifierAttempt(identifier, password);
      throw invalidCredentials();
    }
    if (!(await this.checkPassword(user, password))) throw invalidCredentials();
    if (user.status !== 'ACTIVE') throw forbidden(STATUS_MESSAGES[user.status], `ACCOUNT_${user.status}`);
    const sessionId = await this.startCodeStep('LOGIN', user.phone, user.id, rememberMe);
    return { sessionId, phone: user.phone };
  }

  async resendLoginOtp(sessionId: string, phone: string): Promise<void> {
    const row = await this.openCodeSession(sessionId, phone, 'LOGIN');
    const retryAfter = (new Date(row.expires_at).getTime() - this.now().getTime()) / 1000;
    const resendLimit = () =>
      tooManyRequests('No more codes can be sent for this login; log in again', retryAfter, 'OTP_RESEND_LIMIT');
    if (row.resends >= this.deps.config.otpMaxResends) throw resendLimit();
    await this.reserveCode(row.phone);
    const code = this.newCode();
    // A new code voids the old one; the wrong-code count carries on.
    const updated = await this.deps.db
      .updateTable('otp_sessions')
      .set((eb) => ({
        code_hash: this.codeHash(row.id, code),
        code_expires_at: new Date(this.now().getTime() + this.deps.config.otpTtlMs),
        resends: eb('resends', '+', 1),
      }))
      .where('id', '=', row.id)
      .where('resends', '<', this.deps.config.otpMaxResends)
      .where('consumed_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (!updated) throw resendLimit();
    await this.sendCode(row.phone, code, 'LOGIN');
  }

  async verifyLoginOtp(sessionId: string, phone: string, code: string): Promise<IssuedTokens & { user: UserResponse }> {
    const row = await this.checkCode(sessionId, phone, code, 'LOGIN');
    await this.consumeCode(row);
    const user = await this.deps.db
      .updateTable('users')
      .set({ is_phone_verified: true })
      .where('id', '=', row.user_id!)
      .returning(USER_COLUMNS)
      .executeTakeFirst();
    if (!user) throw sessionInvalid();
    if (user.status !== 'ACTIVE') throw forbidden(STATUS_MESSAGES[user.status], `ACCOUNT_${user.status}`);
    const tokens = await this.createSession(user.id, user.role, row.remember_me);
    return { ...tokens, user: toUserResponse(user) };
  }

  // ---- sessions --------------------------------------------------------------------------------

  private async createSession(userId: string, role: Role, rememberMe: boolean): Promise<IssuedTokens> {
    const id = randomUUID();
    const refreshToken = randomUUID();
    const now = this.now();
    const ttl = rememberMe ? this.deps.config.rememberMeRefreshTokenTtlMs : this.deps.config.refreshTokenTtlMs;
    await this.deps.db
      .insertInto('auth_sessions')
      .values({
        id,
        user_id: userId,
        refresh_token_hash: sha256(refreshToken),
        remember_me: rememberMe,
        expires_at: new Date(now.getTime() + ttl),
        revoked_at: null,
        created_at: now,
        last_used_at: now,
      })
      .execute();
    const { token } = await this.deps.tokens.signAccess({ userId, role, sessionId: id });
    return { accessToken: token, refreshToken };
  }

  async refresh(refreshToken: string): Promise<string> {
    const now = this.now();
    const row = await this.deps.db
      .selectFrom('auth_sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select(['s.id', 's.user_id', 's.expires_at', 's.revoked_at', 'u.role', 'u.status'])
      .where('s.refresh_token_hash', '=', sha256(refreshToken))
      .executeTakeFirst();
    if (!row || row.revoked_at !== null || new Date(row.expires_at) <= now) {
      throw unauthorized('Refresh token is invalid or has expired', 'INVALID_REFRESH_TOKEN');
    }
    if (row.status !== 'ACTIVE') throw forbidden(STATUS_MESSAGES[row.status], `ACCOUNT_${row.status}`);
    await this.deps.db.updateTable('auth_sessions').set({ last_used_at: now }).where('id', '=', row.id).execute();
    const { token } = await this.deps.tokens.signAccess({ userId: row.user_id, role: row.role, sessionId: row.id });
    return token;
  }

  async logout(refreshToken: string): Promise<void> {
    const revoked = await this.deps.db
      .updateTable('auth_sessions')
      .set({ revoked_at: this.now() })
      .where('refresh_token_hash', '=', sha256(refreshToken))
      .where('revoked_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (revoked) this.deps.bus.publish('session.revoked', { sessionId: revoked.id });
  }

  async me(userId: string): Promise<UserResponse> {
    const user = await this.deps.db.selectFrom('users').select(USER_COLUMNS).where('id', '=', userId).executeTakeFirst();
    if (!user) throw unauthorized('Session has been revoked', 'SESSION_REVOKED');
    return toUserResponse(user);
  }

  // ---- passwords -------------------------------------------------------------------------------

  async forgotPassword(identifier: string): Promise<{ sessionId: string; phone: string }> {
    const user = await this.findByIdentifier(identifier);
    const isPhone = !identifier.includes('@');
    // No account: the same steps on a stand-in phone (the one given, or one derived from the e-mail),
    // with a code step that no code opens, so every later answer matches a real account's.
    const phone = user?.phone ?? (isPhone ? identifier.trim() : this.standInPhone(identifier));
    let sessionId: string;
    try {
      sessionId = await this.startCodeStep('PASSWORD_RESET', phone, user?.id ?? null, false, Boolean(user));
    } catch (err) {
      // The per-phone cap must not tell a stranger that the account exists: answer the same.
      if (err instanceof AppError && err.code === 'OTP_PHONE_LIMIT') sessionId = randomUUID();
      else throw err;
    }
    return { sessionId, phone: isPhone ? phone : maskPhone(phone) };
  }

  private standInPhone(identifier: string): string {
    const digits = BigInt(`0x${sha256(`${this.deps.codeKey}:${identifier.trim().toLowerCase()}`).slice(0, 12)}`).toString();
    return `+${digits.padStart(12, '1').slice(0, 12)}`;
  }

  async resetPassword(sessionId: string, phone: string, code: string, newPassword: string): Promise<void> {
    assertAcceptablePassword(newPassword, 'newPassword');
    const row = await this.checkCode(sessionId, phone, code, 'PASSWORD_RESET');
    const passwordHash = await hashPassword(newPassword);
    // A step for no account has no code that opens it; this is only a second lock on that door.
    if (!row.user_id) throw unauthorized('Invalid code', 'INVALID_OTP');
    const userId = row.user_id;
    const revoked = await this.deps.db.transaction().execute(async (trx) => {
      await this.consumeCode(row, trx);
      await trx
        .updateTable('users')
        .set({ password_hash: passwordHash, failed_login_count: 0, locked_until: null, updated_at: this.now() })
        .where('id', '=', userId)
        .execute();
      return this.revokeSessions(userId, trx);
    });
    this.announceRevoked(userId, revoked);
  }

  async changePassword(userId: string, currentSessionId: string, currentPassword: string, newPassword: string): Promise<void> {
    const user = await this.deps.db
      .selectFrom('users')
      .select(['id', 'password_hash', 'locked_until', 'failed_login_count'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    assertAcceptablePassword(newPassword, 'newPassword');
    if (!(await this.checkPassword(user, currentPassword))) {
      throw unauthorized('Current password is incorrect', 'INVALID_CREDENTIALS');
    }
    const passwordHash = await hashPassword(newPassword);
    const revoked = await this.deps.db.transaction().execute(async (trx) => {
      await trx.updateTable('users').set({ password_hash: passwordHash, updated_at: this.now() }).where('id', '=', userId).execute();
      // Other devices must log in again with the new password; this one stays signed in.
      return this.revokeSessions(userId, trx, currentSessionId);
    });
    for (const sessionId of revoked) this.deps.bus.publish('session.revoked', { sessionId });
  }

  /** Revokes every live session of a user (optionally but one); returns their ids. */
  async revokeSessions(userId: string, db: DB | Transaction<Database> = this.deps.db, exceptSessionId?: string): Promise<string[]> {
    let query = db
      .updateTable('auth_sessions')
      .set({ revoked_at: this.now() })
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null);
    if (exceptSessionId) query = query.where('id', '!=', exceptSessionId);
    const rows = await query.returning('id').execute();
    return rows.map((r) => r.id);
  }

  announceRevoked(userId: string, sessionIds: string[], status?: string): void {
    for (const sessionId of sessionIds) this.deps.bus.publish('session.revoked', { sessionId });
    this.deps.bus.publish('user.changed', status ? { userId, status } : { userId });
  }
}

