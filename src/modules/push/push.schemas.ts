// Request and response schemas of the push module (contract section 19).
import { Type, type Static } from '@sinclair/typebox';
import { Body, DateTime, Nullable } from '../../shared/schemas.js';

/** Subscriptions kept per account; a new one beyond this replaces the oldest. */
export const MAX_SUBSCRIPTIONS_PER_USER = 10;

const Endpoint = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: "The push service's URL for this browser: https:// (http:// only where PUSH_ALLOW_HTTP allows it)",
});
const Base64Url = (description: string, minLength: number, maxLength: number) =>
  Type.String({ pattern: '^[A-Za-z0-9_-]+={0,2}$', minLength, maxLength, description });

/** The browser's PushSubscription as its toJSON() gives it. */
export const SubscribeBody = Body({
  endpoint: Endpoint,
  expirationTime: Type.Optional(Nullable(Type.Number())),
  keys: Body({
    p256dh: Base64Url("The browser's P-256 public key, base64url (65 bytes, uncompressed)", 87, 88),
    auth: Base64Url('The authentication secret, base64url (16 bytes)', 22, 24),
  }),
});
export type SubscribeBody = Static<typeof SubscribeBody>;

export const UnsubscribeBody = Body({ endpoint: Endpoint });
export type UnsubscribeBody = Static<typeof UnsubscribeBody>;

export const SubscriptionResponse = Type.Object({ endpoint: Type.String(), createdAt: DateTime });
export const VapidKeyResponse = Type.Object({
  publicKey: Type.String({
    description: 'The VAPID public key, base64url (applicationServerKey of pushManager.subscribe)',
  }),
});
