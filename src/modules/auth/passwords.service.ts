// Passwords (section 4): the password step of login with its lockout, forgotten and changed passwords.
import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { DB } from '../../db/database.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, tooManyRequests, unauthorized } from '../../shared/errors.js';
import { maskPhone, type CodesService } from './codes.service.js';
import { assertAcceptablePassword, hashPassword, verifyAgainstDummy, verifyPassword } from './passwords.js';
import type { SessionsService } from './sessions.service.js';
import type { UsersRepository } from './users.repository.js';

export const MAX_WRONG_PASSWORDS = 10;
export const PASSWORD_LOCK_MS = 15 * 60_000;

export interface PasswordServiceDeps {
  /** For the transactions that change a password and revoke sessions together. */
  db: DB;
  clock: Clock;
  users: UsersRepository;
  codes: CodesService;
  sessions: SessionsService;
}

type Credentials = { id: string; password_hash: string; locked_until: Date | null; failed_login_count: number };

const invalidCredentials = () => unauthorized('Invalid credentials', 'INVALID_CREDENTIALS');

export class PasswordService {
  /**
   * Wrong passwords for identifiers that match no account, counted like an account's, so that the
   * lockout answers the same whether or not the account exists (per instance: no table to fill).
   */
  private readonly unknownFailures = new LRUCache<string, { count: number; lockedUntil: number }>({
    max: 100_000,
    ttl: PASSWORD_LOCK_MS * 2,
  });
  constructor(private readonly deps: PasswordServiceDeps) {}

  private now(): Date {
    return this.deps.clock.now();
  }

  private findByIdentifier(identifier: string) {
    return identifier.includes('@')
      ? this.deps.users.getCredentialsByEmail(identifier.trim())
      : this.deps.users.getCredentialsByPhone(identifier.trim());
  }

  private assertNotLocked(user: { locked_until: Date | null }): void {
    const lockedFor = user.locked_until ? new Date(user.locked_until).getTime() - this.now().getTime() : 0;
    if (lockedFor > 0) {
      throw tooManyRequests(
        'Too many wrong passwords; this account is locked for a while',
        lockedFor / 1000,
        'ACCOUNT_LOCKED',
      );
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

  /** Checks a password against the lock; a wrong one is counted, the MAX_WRONG_PASSWORDS-th in a row locks. */
  private async checkPassword(user: Credentials, password: string): Promise<boolean> {
    this.assertNotLocked(user);
    if (!(await verifyPassword(user.password_hash, password))) {
      await this.deps.users.addWrongPassword(
        user.id,
        MAX_WRONG_PASSWORDS,
        new Date(this.now().getTime() + PASSWORD_LOCK_MS),
      );
      return false;
    }
    if (user.failed_login_count > 0) await this.deps.users.clearWrongPasswords(user.id);
    return true;
  }

  /** The password step of login: the account of `identifier` if the password is right, else 401 (or 429 when locked). */
  async checkLogin(identifier: string, password: string) {
    const user = await this.findByIdentifier(identifier);
    if (!user) {
      await this.unknownIdentifierAttempt(identifier, password);
      throw invalidCredentials();
    }
    if (!(await this.checkPassword(user, password))) throw invalidCredentials();
    return user;
  }

  async forgotPassword(identifier: string): Promise<{ sessionId: string; phone: string }> {
    const user = await this.findByIdentifier(identifier);
    const isPhone = !identifier.includes('@');
    // No account: the same steps on a stand-in phone (the one given, or one derived from the e-mail),
    // with a code step that no code opens, so every later answer matches a real account's.
    const phone = user?.phone ?? (isPhone ? identifier.trim() : this.deps.codes.standInPhone(identifier));
    let sessionId: string;
    try {
      sessionId = await this.deps.codes.start('PASSWORD_RESET', phone, user?.id ?? null, false, Boolean(user));
    } catch (err) {
      // The per-phone cap must not tell a stranger that the account exists: answer the same.
      if (err instanceof AppError && err.code === 'OTP_PHONE_LIMIT') sessionId = randomUUID();
      else throw err;
    }
    return { sessionId, phone: isPhone ? phone : maskPhone(phone) };
  }

  async resetPassword(sessionId: string, phone: string, code: string, newPassword: string): Promise<void> {
    assertAcceptablePassword(newPassword, 'newPassword');
    const row = await this.deps.codes.check(sessionId, phone, code, 'PASSWORD_RESET');
    const passwordHash = await hashPassword(newPassword);
    // A step for no account has no code that opens it; this is only a second lock on that door.
    if (!row.user_id) throw unauthorized('Invalid code', 'INVALID_OTP');
    const userId = row.user_id;
    const revoked = await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.codes.consume(trx, row);
      await this.deps.users.setPassword(trx, userId, passwordHash, this.now(), { unlock: true });
      return this.deps.sessions.revokeSessions(trx, userId);
    });
    this.deps.sessions.announceRevoked(userId, revoked);
  }

  async changePassword(
    userId: string,
    currentSessionId: string,
    currentPassword: string,
    newPassword: string,
  ): Promise<void> {
    const user = await this.deps.users.getCredentialsById(userId);
    // The token's session was checked just before: its user cannot be missing (a 500 if it were).
    if (!user) throw new Error(`no user ${userId}`);
    assertAcceptablePassword(newPassword, 'newPassword');
    if (!(await this.checkPassword(user, currentPassword))) {
      throw unauthorized('Current password is incorrect', 'INVALID_CREDENTIALS');
    }
    const passwordHash = await hashPassword(newPassword);
    const revoked = await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.users.setPassword(trx, userId, passwordHash, this.now(), { unlock: false });
      // Other devices must log in again with the new password; this one stays signed in.
      return this.deps.sessions.revokeSessions(trx, userId, currentSessionId);
    });
    this.deps.sessions.publishRevoked(revoked);
  }
}
