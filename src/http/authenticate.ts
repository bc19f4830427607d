// Bearer-token authentication and role checks. A token is accepted only while its session is
// unrevoked and its account ACTIVE; that state is cached and dropped at once through the bus (on every
// instance, when Redis is configured) when a session is revoked or an account changes; a reconnection to
// Redis drops them all, and while Redis is away an entry is trusted for 1 s only. As a backstop against
// a message lost otherwise, an entry is read again after 60–90 s (each at its own time, so sessions read
// together, as after a restart, are not read again together): in the background while the request
// goes on with the entry it has, and, should that read not succeed, in the request once the entry is
// 3 minutes old. (Read again in the request every 30 s, as it was, 10,000 sessions warmed together all
// expired together, and their reads stalled requests for up to 200 ms in B1.)
import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { AccountStatus, Role } from '../db/schema.js';
import {
  STATUS_MESSAGES,
  type AccessClaims,
  type AccessTokenVerifier,
  type AuthContext,
} from '../shared/auth-context.js';
import type { Bus } from '../shared/bus.js';
import { forbidden, unauthorized } from '../shared/errors.js';
import type { SessionStateRepository } from './session-state.repository.js';

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
  /** When it was read (performance.now()). */
  readAt: number;
  /** When to read it again in the background (performance.now()). */
  refreshAt: number;
}

/** An entry is read again in the background after REFRESH_AFTER_MS plus up to REFRESH_JITTER_MS. */
const REFRESH_AFTER_MS = 60_000;
const REFRESH_JITTER_MS = 30_000;
/** Beyond this age an entry is gone: the request reads the session itself. */
const CACHE_TTL_MS = 180_000;
/** The longest an entry is trusted while invalidations may be missed (Redis away): see Bus.reliable. */
export const UNRELIABLE_BUS_MAX_AGE_MS = 1000;
const CACHE_MAX = 50_000;

/**
 * The access token of a request: the Authorization header's bearer, or, where `fromQuery` allows it, the
 * access_token query parameter. Only the event streams and the driver WebSocket allow it (contract
 * section 14): a browser's EventSource and WebSocket cannot send headers. It is never logged
 * (http/request-logger.ts).
 */
export function accessTokenOf(request: FastifyRequest, fromQuery: boolean): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (match) return match[1];
  if (!fromQuery) return undefined;
  const value = (request.query as Record<string, unknown> | undefined)?.access_token;
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

export class AuthGuard {
  /** Lifetimes on a monotonic clock; revocations and account changes drop entries at once. */
  private readonly cache = new LRUCache<string, SessionState>({ max: CACHE_MAX, ttl: CACHE_TTL_MS });
  /** Sessions being read again in the background. */
  private readonly refreshing = new Set<string>();
  /** Bumped by every invalidation: a read that an invalidation overtook is used once but not cached. */
  private epoch = 0;
  private readonly now: () => number;
  private readonly sessions: SessionStateRepository;

  constructor(
    private readonly deps: {
      sessions: SessionStateRepository;
      bus: Bus;
      tokens: AccessTokenVerifier;
      now?: () => number;
    },
  ) {
    this.now = deps.now ?? (() => performance.now());
    this.sessions = deps.sessions;
    deps.bus.subscribe('session.revoked', ({ sessionId }) => {
      this.epoch += 1;
      this.cache.delete(sessionId);
    });
    deps.bus.subscribe('bus.resync', () => {
      this.epoch += 1;
      this.cache.clear();
    });
    deps.bus.subscribe('user.changed', ({ userId }) => {
      this.epoch += 1;
      for (const [sid, state] of this.cache.entries()) if (state.userId === userId) this.cache.delete(sid);
    });
  }

  /** Verifies a raw access token and its session; throws (rejects with) 401/403 AppErrors. */
  async authenticateToken(token: string): Promise<AuthContext> {
    const claims = this.deps.tokens.verifyAccess(token);
    return this.contextFor(claims, await this.sessionState(claims.sessionId));
  }

  /**
   * onRequest hook: requires a valid bearer token and, when given, one of the roles. A callback
   * hook: a token and session seen recently are checked without a promise (every request pays this).
   */
  required(
    roles?: Role[],
    options: { /** An event stream's: it also takes ?access_token= (accessTokenOf). */ queryToken?: boolean } = {},
  ): onRequestHookHandler {
    // No closure is made per request on the cached path (tsx names every closure it makes, at a cost).
    const finish = (request: FastifyRequest, auth: AuthContext, done: (err?: Error) => void) => {
      request.auth = auth;
      if (roles && !roles.includes(auth.role))
        return done(forbidden(`This action requires role ${roles.join(' or ')}`, 'WRONG_ROLE'));
      done();
    };
    return (request: FastifyRequest, _reply, done) => {
      const token = accessTokenOf(request, options.queryToken === true);
      if (!token) return done(unauthorized('Missing bearer token', 'MISSING_TOKEN'));
      let known: AuthContext | undefined;
      try {
        known = this.knownContext(token);
      } catch (err) {
        return done(err as Error);
      }
      if (known) finish(request, known, done);
      else this.authenticateToken(token).then((auth) => finish(request, auth, done), done);
    };
  }

  /**
   * Whether the session still stands: not revoked, this user's, account ACTIVE. For connections that
   * outlive their access token (the driver WebSocket), whose token may have expired since.
   */
  async sessionStands(sessionId: string, userId: string): Promise<'ok' | 'revoked' | 'inactive'> {
    const state = await this.sessionState(sessionId);
    if (!state || state.revoked || state.userId !== userId) return 'revoked';
    return state.status === 'ACTIVE' ? 'ok' : 'inactive';
  }

  /** The context of a valid token whose session is cached; undefined when the session must be read. */
  private knownContext(token: string): AuthContext | undefined {
    const claims = this.deps.tokens.verifyAccess(token);
    const state = this.cached(claims.sessionId);
    return state && this.contextFor(claims, state);
  }

  private contextFor(claims: AccessClaims, state: SessionState | undefined): AuthContext {
    if (!state || state.revoked || state.userId !== claims.userId) {
      throw unauthorized('Session has been revoked', 'SESSION_REVOKED');
    }
    if (state.status !== 'ACTIVE') throw forbidden(STATUS_MESSAGES[state.status], `ACCOUNT_${state.status}`);
    // The role comes from the account, not the token, so a changed role takes effect at once.
    return { userId: state.userId, role: state.role, sessionId: claims.sessionId };
  }

  private cached(sessionId: string): SessionState | undefined {
    const state = this.cache.get(sessionId);
    if (!state) return undefined;
    const now = this.now();
    if (now - state.readAt > CACHE_TTL_MS) return undefined;
    if (!this.deps.bus.reliable && now - state.readAt > UNRELIABLE_BUS_MAX_AGE_MS) return undefined;
    if (now >= state.refreshAt && !this.refreshing.has(sessionId)) {
      this.refreshing.add(sessionId);
      // A failed read leaves the entry as it is until it is too old (then the request reads it).
      this.read(sessionId)
        .catch(() => undefined)
        .finally(() => this.refreshing.delete(sessionId));
    }
    return state;
  }

  private async sessionState(sessionId: string): Promise<SessionState | undefined> {
    return this.cached(sessionId) ?? this.read(sessionId);
  }

  private async read(sessionId: string): Promise<SessionState | undefined> {
    const readAt = this.now();
    const epoch = this.epoch;
    const row = await this.sessions.getById(sessionId);
    if (!row) {
      this.cache.delete(sessionId);
      return undefined;
    }
    const state: SessionState = {
      userId: row.user_id,
      role: row.role,
      status: row.status,
      revoked: row.revoked_at !== null,
      readAt,
      refreshAt: readAt + REFRESH_AFTER_MS + Math.random() * REFRESH_JITTER_MS,
    };
    if (epoch === this.epoch) this.cache.set(sessionId, state);
    return state;
  }
}
