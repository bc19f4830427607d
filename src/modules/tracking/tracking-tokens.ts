// Tracking links: token = HMAC(key, packageId.nonce), 256 bits, so that it can be shown again on every
// read of the package while the database keeps only its SHA-256 (the lookup) and the nonce (a new
// nonce revokes the old link). A stolen database alone yields no working link.
import { createHash, createHmac, randomBytes } from 'node:crypto';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export class TrackingTokens {
  private readonly key: Buffer;

  constructor(
    secret: string,
    private readonly publicBaseUrl: string,
  ) {
    this.key = createHmac('sha256', secret).update('tracking-token').digest();
  }

  static newNonce(): string {
    return randomBytes(16).toString('base64url');
  }

  static wellFormed(token: string): boolean {
    return TOKEN_PATTERN.test(token);
  }

  token(packageId: string, nonce: string): string {
    return createHmac('sha256', this.key).update(`${packageId}.${nonce}`).digest('base64url');
  }

  /** What the database holds: the token's SHA-256 (the token already carries 256 bits, no salt needed). */
  static hash(token: string): string {
    return createHash('sha256').update(token).digest('hex');
  }

  hashFor(packageId: string, nonce: string): string {
    return TrackingTokens.hash(this.token(packageId, nonce));
  }

  url(packageId: string, nonce: string): string {
    return `${this.publicBaseUrl}/t/${this.token(packageId, nonce)}`;
  }
}
