// Who is calling: what authentication hands to routes and services, and what a token must prove.
import type { AccountStatus, Role } from '../db/schema.js';

export interface AuthContext {
  userId: string;
  role: Role;
  sessionId: string;
}

/** The claims of a verified access token. */
export type AccessClaims = AuthContext;

/** Verifies an access token's signature and lifetime (the auth module's TokenService). */
export interface AccessTokenVerifier {
  verifyAccess(token: string): AccessClaims;
}

export const STATUS_MESSAGES: Record<Exclude<AccountStatus, 'ACTIVE'>, string> = {
  PENDING_APPROVAL: 'Account is pending approval',
  REJECTED: 'Account has been rejected',
  SUSPENDED: 'Account is suspended',
};
