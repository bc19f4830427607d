// Tokens and login: the JWT, token and session lifetimes, one-time codes, the bootstrap admin.
import type { EnvReader } from './env-reader.js';
import type { ServerConfig } from './server.js';

export interface AuthConfig {
  /** undefined in development until deps fill it from DATA_DIR/jwt-secret. */
  jwtSecret: string | undefined;
  jwtIssuer: string;
  jwtAudience: string;
  accessTokenTtlMs: number;
  refreshTokenTtlMs: number;
  rememberMeRefreshTokenTtlMs: number;
  loginSessionTtlMs: number;
  otpTtlMs: number;
  otpMaxAttempts: number;
  otpMaxResends: number;
  admin: { email: string; phone: string; password: string } | undefined;
  /** Development only, with no bootstrap admin configured: the first start creates admin@localhost with this phone. */
  firstRunAdmin: { email: string; phone: string } | undefined;
}

export function readAuth(r: EnvReader, { nodeEnv, isProduction }: ServerConfig): AuthConfig {
  const jwtSecret = r.get('JWT_SECRET');
  if (jwtSecret !== undefined && Buffer.byteLength(jwtSecret, 'utf8') < 32)
    r.problem('JWT_SECRET must be at least 32 bytes');
  if (isProduction && !jwtSecret) r.problem('JWT_SECRET is required in production');
  else if (isProduction && jwtSecret !== undefined && weakSecret(jwtSecret)) {
    r.problem(
      'JWT_SECRET looks weak (a placeholder or few distinct characters): use 32+ random bytes, e.g. `openssl rand -base64 48`',
    );
  }
  // Authenticated requests do not look at the session's expiry: an access token must not outlive
  // its refresh token, and "remember me" never gives the shorter session.
  const [accessTokenTtlMs, refreshTokenTtlMs, rememberMeRefreshTokenTtlMs] = r.ascending([
    ['ACCESS_TOKEN_TTL', r.duration('ACCESS_TOKEN_TTL', '15m', '1d')],
    ['REFRESH_TOKEN_TTL', r.duration('REFRESH_TOKEN_TTL', '7d', '365d')],
    ['REMEMBER_ME_REFRESH_TOKEN_TTL', r.duration('REMEMBER_ME_REFRESH_TOKEN_TTL', '30d', '365d')],
  ]);
  // A code cannot be used once its login session has ended.
  const [otpTtlMs, loginSessionTtlMs] = r.ascending([
    ['OTP_TTL', r.duration('OTP_TTL', '5m', '1h')],
    ['LOGIN_SESSION_TTL', r.duration('LOGIN_SESSION_TTL', '10m', '1d')],
  ]);

  const adminEmail = r.get('ADMIN_EMAIL');
  const adminPhone = r.get('ADMIN_PHONE');
  const adminPassword = r.get('ADMIN_PASSWORD');
  const adminCount = [adminEmail, adminPhone, adminPassword].filter((v) => v !== undefined).length;
  // ADMIN_PHONE alone only names the phone of the first-run admin (development).
  if (adminCount > 0 && adminCount < 3 && !(adminCount === 1 && adminPhone !== undefined)) {
    r.problem('ADMIN_EMAIL, ADMIN_PHONE and ADMIN_PASSWORD must be set together');
  }
  return {
    jwtSecret,
    jwtIssuer: r.str('JWT_ISSUER', 'ride-delivery-backend'),
    jwtAudience: r.str('JWT_AUDIENCE', 'ride-delivery-api'),
    accessTokenTtlMs,
    refreshTokenTtlMs,
    rememberMeRefreshTokenTtlMs,
    loginSessionTtlMs,
    otpTtlMs,
    otpMaxAttempts: r.int('OTP_MAX_ATTEMPTS', 5, 1, 100),
    otpMaxResends: r.int('OTP_MAX_RESENDS', 3, 0, 100),
    admin: adminCount === 3 ? { email: adminEmail!, phone: adminPhone!, password: adminPassword! } : undefined,
    firstRunAdmin:
      nodeEnv === 'development' && adminCount < 3
        ? { email: 'admin@localhost', phone: adminPhone ?? '+254700000000' }
        : undefined,
  };
}

// A secret of 32+ bytes can still be guessable: a placeholder word repeated, or a handful of characters.
function weakSecret(secret: string): boolean {
  if (new Set(secret).size < 12) return true;
  return /change.?me|secret|password|example|placeholder/i.test(secret);
}
