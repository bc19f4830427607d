// Access tokens: JWT HS256 with sub, role, sid, jti, iat, exp, iss, aud. Only HS256 is accepted.
import { randomUUID } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';
import { LRUCache } from 'lru-cache';
import type { Role } from '../../db/schema.js';
import type { AccessClaims } from '../../shared/auth-context.js';
import type { Clock } from '../../shared/clock.js';
import { unauthorized } from '../../shared/errors.js';

export type { AccessClaims };

export interface TokenServiceOptions {
  secret: string;
  issuer: string;
  audience: string;
  accessTtlMs: number;
  clock: Clock;
}

const ROLES = new Set(['CUSTOMER', 'DRIVER', 'BUSINESS', 'COMPANY', 'ADMIN']);

export class TokenService {
  private readonly signer: (payload: Record<string, unknown>) => string;
  private readonly verifier: (token: string) => unknown;
  /** Verified tokens, keyed by the token itself; expiry is still checked on every use. */
  private readonly verified = new LRUCache<string, AccessClaims & { exp: number }>({ max: 10_000, ttl: 60_000 });
  constructor(private readonly options: TokenServiceOptions) {
    // iat and exp come from the injected clock (signAccess), which the signer keeps as given.
    this.signer = createSigner({ key: options.secret, algorithm: 'HS256' });
    this.verifier = createVerifier({
      key: options.secret,
      algorithms: ['HS256'],
      allowedIss: options.issuer,
      allowedAud: options.audience,
      requiredClaims: ['sub', 'exp', 'iat', 'jti', 'iss', 'aud'],
      ignoreExpiration: true,
      ignoreNotBefore: false,
      cache: false,
    });
  }

  async signAccess(claims: AccessClaims): Promise<{ token: string; expiresAt: Date }> {
    const nowSeconds = Math.floor(this.options.clock.now().getTime() / 1000);
    const exp = nowSeconds + Math.max(1, Math.floor(this.options.accessTtlMs / 1000));
    const token = this.signer({
      role: claims.role,
      sid: claims.sessionId,
      sub: claims.userId,
      jti: randomUUID(),
      iat: nowSeconds,
      exp,
      iss: this.options.issuer,
      aud: this.options.audience,
    });
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /** HS256 only, iss, aud and the claims; expiry against the injected clock on every call. */
  verifyAccess(token: string): AccessClaims {
    let claims = this.verified.get(token);
    if (!claims) {
      claims = this.verifySignedClaims(token);
      this.verified.set(token, claims);
    }
    if (claims.exp * 1000 <= this.options.clock.now().getTime()) {
      throw unauthorized('Access token has expired', 'TOKEN_EXPIRED');
    }
    return { userId: claims.userId, role: claims.role, sessionId: claims.sessionId };
  }

  private verifySignedClaims(token: string): AccessClaims & { exp: number } {
    let payload: Record<string, unknown>;
    try {
      payload = this.verifier(token) as Record<string, unknown>;
    } catch {
      throw unauthorized('Invalid access token', 'INVALID_TOKEN');
    }
    const { exp, role, sid, sub } = payload;
    if (
      typeof exp !== 'number' ||
      typeof role !== 'string' ||
      !ROLES.has(role) ||
      typeof sid !== 'string' ||
      typeof sub !== 'string' ||
      !sub
    ) {
      throw unauthorized('Invalid access token', 'INVALID_TOKEN');
    }
    return { userId: sub, role: role as Role, sessionId: sid, exp };
  }
}
