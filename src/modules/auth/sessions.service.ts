// Login sessions (section 4): issuing the token pair, refresh, logout, revocation and its announcements.
import { createHash, randomUUID } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Executor } from '../../db/executor.js';
import type { Role } from '../../db/schema.js';
import { STATUS_MESSAGES } from '../../shared/auth-context.js';
import type { Bus } from '../../shared/bus.js';
import type { Clock } from '../../shared/clock.js';
import { forbidden, unauthorized } from '../../shared/errors.js';
import type { SessionsRepository } from './sessions.repository.js';
import type { TokenService } from './tokens.js';

type SessionsConfig = { auth: Pick<Config['auth'], 'refreshTokenTtlMs' | 'rememberMeRefreshTokenTtlMs'> };

export interface SessionsServiceDeps {
  repo: SessionsRepository;
  clock: Clock;
  config: SessionsConfig;
  tokens: TokenService;
  bus: Bus;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
}

export const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * What else a sign-out ends, given by the composition root (services.ts): a driver goes OFFLINE, the
 * phone's push subscription goes. Auth imports neither module; they implement this port.
 */
export type SignOutHook = (ended: { userId: string; role: Role }, pushEndpoint: string | undefined) => Promise<void>;

export class SessionsService {
  constructor(
    private readonly deps: SessionsServiceDeps,
    private readonly signedOut: SignOutHook = async () => undefined,
  ) {}

  private now(): Date {
    return this.deps.clock.now();
  }

  async create(userId: string, role: Role, rememberMe: boolean): Promise<IssuedTokens> {
    const id = randomUUID();
    const refreshToken = randomUUID();
    const now = this.now();
    const ttl = rememberMe
      ? this.deps.config.auth.rememberMeRefreshTokenTtlMs
      : this.deps.config.auth.refreshTokenTtlMs;
    await this.deps.repo.insert({
      id,
      user_id: userId,
      refresh_token_hash: sha256(refreshToken),
      remember_me: rememberMe,
      expires_at: new Date(now.getTime() + ttl),
      revoked_at: null,
      created_at: now,
      last_used_at: now,
    });
    const { token } = await this.deps.tokens.signAccess({ userId, role, sessionId: id });
    return { accessToken: token, refreshToken };
  }

  async refresh(refreshToken: string): Promise<string> {
    const now = this.now();
    const row = await this.deps.repo.getByRefreshHash(sha256(refreshToken));
    if (!row || row.revoked_at !== null || new Date(row.expires_at) <= now) {
      throw unauthorized('Refresh token is invalid or has expired', 'INVALID_REFRESH_TOKEN');
    }
    if (row.status !== 'ACTIVE') throw forbidden(STATUS_MESSAGES[row.status], `ACCOUNT_${row.status}`);
    await this.deps.repo.touch(row.id, now);
    const { token } = await this.deps.tokens.signAccess({ userId: row.user_id, role: row.role, sessionId: row.id });
    return token;
  }

  /**
   * Revokes the session of a refresh token and, when it was live, runs the sign-out hook; an unknown
   * or already revoked token changes nothing else (a late sign-out of an old phone leaves the driver
   * alone). Whose it was when it was live (else undefined).
   */
  async logout(refreshToken: string, pushEndpoint?: string): Promise<{ userId: string; role: Role } | undefined> {
    const revoked = await this.deps.repo.revokeByRefreshHash(sha256(refreshToken), this.now());
    if (!revoked) return undefined;
    this.publishRevoked([revoked.id]);
    const ended = { userId: revoked.userId, role: revoked.role };
    await this.signedOut(ended, pushEndpoint);
    return ended;
  }

  /** Revokes every live session of a user (optionally but one); returns their ids. */
  revokeSessions(db: Executor, userId: string, exceptSessionId?: string): Promise<string[]> {
    return this.deps.repo.revokeForUser(db, userId, this.now(), exceptSessionId);
  }

  /** Tells every instance (through the bus) that these sessions no longer hold. */
  publishRevoked(sessionIds: string[]): void {
    for (const sessionId of sessionIds) this.deps.bus.publish('session.revoked', { sessionId });
  }

  /** The sessions revoked, then that the user changed (its status, when that is what changed). */
  announceRevoked(userId: string, sessionIds: string[], status?: string): void {
    this.publishRevoked(sessionIds);
    this.deps.bus.publish('user.changed', status ? { userId, status } : { userId });
  }
}
