// Access tokens: JWT HS256 with sub, role, sid, jti, iat, exp, iss, aud. Only HS256 is accepted.
import { randomUUID } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Role } from '../../db/schema.js';
import type { Clock } from '../../shared/clock.js';
import { unauthorized } from '../../shared/errors.js';

export interface AccessClaims {
  userId: string;
  role: Role;
  sessionId: string;
}

export interface TokenServiceOptions {
  secret: string;
  issuer: string;
  audience: string;
  accessTtlMs: number;
  clock: Clock;
}

const ROLES = new Set(['CUSTOMER', 'DRIVER', 'BUSINESS', 'COMPANY', 'ADMIN']);

export class TokenService {
  private readonly key: Uint8Array;
  constructor(private readonly options: TokenServiceOptions) {
    this.key = new TextEncoder().encode(options.secret);
  }

  async signAccess(claims: AccessClaims): Promise<{ token: string; expiresAt: Date }> {
    const nowSeconds = Math.floor(this.options.clock.now().getTime() / 1000);
    const exp = nowSeconds + Math.max(1, Math.floor(this.options.accessTtlMs / 1000));
    const token = await new SignJWT({ role: claims.role, sid: claims.sessionId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.userId)
      .setJti(randomUUID())
      .setIssuedAt(nowSeconds)
      .setExpirationTime(exp)
      .setIssuer(this.options.issuer)
      .setAudience(this.options.audience)
      .sign(this.key);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /** Verifies signature (HS256 only), exp, iss and aud; any failure is a 401. */
  async verifyAccess(token: string): Promise<AccessClaims> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: this.options.issuer,
        audience: this.options.audience,
        currentDate: this.options.clock.now(),
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      });
      const role = payload.role;
      const sid = payload.sid;
      if (typeof role !== 'string' || !ROLES.has(role) || typeof sid !== 'string' || !payload.sub) {
        throw unauthorized('Invalid access token', 'INVALID_TOKEN');
      }
      return { userId: payload.sub, role: role as Role, sessionId: sid };
    } catch (err) {
      if (err instanceof joseErrors.JWTExpired) throw unauthorized('Access token has expired', 'TOKEN_EXPIRED');
      throw unauthorized('Invalid access token', 'INVALID_TOKEN');
    }
  }
}
