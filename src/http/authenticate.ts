// Bearer-token authentication and role checks. A token is accepted only while its session is
// unrevoked and its account ACTIVE; that state is cached briefly and dropped at once through the bus
// (on every instance, when Redis is configured) when a session is revoked or an account changes.
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { DB } from '../db/database.js';
import type { AccountStatus, Role } from '../db/schema.js';
import type { Bus } from '../shared/bus.js';
import { forbidden, unauthorized } from '../shared/errors.js';
import type { TokenService } from '../modules/auth/tokens.js';

export interface AuthContext {
  userId: string;
  role: Role;
  sessionId: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext;
  }
}

interface SessionState {
  userId: string;
  role: Role;
  status: AccountStatus;
  revoked: boolean;
}

const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 50_000;

export const STATUS_MESSAGES: Record<Exclude<AccountStatus, 'ACTIVE'>, string> = {
  PENDING_APPROVAL: 'Account is pending approval',
  REJECTED: 'Account has been rejected',
  SUSPENDED: 'Account is suspended',
};

export class AuthGuard {
  /** Lifetimes on a monotonic clock; revocations and account changes drop entries at once. */
  private readonly cache = new LRUCache<string, SessionState>({ max: CACHE_MAX, ttl: CACHE_TTL_MS });

  constructor(
    private readonly deps: { db: DB; bus: Bus; tokens: TokenService },
  ) {
    deps.bus.subscribe('session.revoked', ({ sessionId }) => this.cache.delete(sessionId));
    deps.bus.subscribe('user.changed', ({ userId }) => {
      for (const [sid, state] of this.cache.entries()) if (state.userId === userId) this.cache.delete(sid);
    });
  }

  /** Verifies a raw access token and its session; throws 401/403 AppErrors. */
  async authenticateToken(token: string): Promise<AuthContext> {
    const claims = await this.deps.tokens.verifyAccess(token);
    const state = await this.sessionState(claims.sessionId);
    if (!state || state.revoked || state.userId !== claims.userId) {
      throw unauthorized('Session has been revoked', 'SESSION_REVOKED');
    }
    if (state.status !== 'ACTIVE') throw forbidden(STATUS_MESSAGES[state.status], `ACCOUNT_${state.status}`);
    // The role comes from the account, not the token, so a changed role takes effect at once.
    return { userId: state.userId, role: state.role, sessionId: claims.sessionId };
  }

  /** onRequest hook: requires a valid bearer token and, when given, one of the roles. */
  required(roles?: Role[]): onRequestHookHandler {
    return async (request: FastifyRequest) => {
      const header = request.headers.authorization;
      const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      if (!match) throw unauthorized('Missing bearer token', 'MISSING_TOKEN');
      request.auth = await this.authenticateToken(match[1]);
      if (roles && !roles.includes(request.auth.role)) {
        throw forbidden(`This action requires role ${roles.join(' or ')}`, 'WRONG_ROLE');
      }
    };
  }

  private async sessionState(sessionId: string): Promise<SessionState | undefined> {
    const cached = this.cache.get(sessionId);
    if (cached) return cached;
    const row = await this.deps.db
      .selectFrom('auth_sessions as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select(['s.user_id', 's.revoked_at', 'u.role', 'u.status'])
      .where('s.id', '=', sessionId)
      .executeTakeFirst();
    if (!row) return undefined;
    const state: SessionState = {
      userId: row.user_id,
      role: row.role,
      status: row.status,
      revoked: row.revoked_at !== null,
    };
    this.cache.set(sessionId, state);
    return state;
  }
}
