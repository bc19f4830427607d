// Safaricom's Daraja API (contract section 26), as test/fixtures/mpesa/ records it: OAuth client
// credentials with one cached token per credential set, STK Push and its query, B2C v3, Transaction
// Status, C2B URL registration. Every call has a timeout; every failure is one DarajaError kind.
import type { Clock } from '../../shared/clock.js';

export interface DarajaClientOptions {
  baseUrl: string;
  consumerKey: string;
  consumerSecret: string;
  /** The STK (paybill) shortcode and its Lipa na M-Pesa online passkey. */
  shortcode: string;
  passkey: string;
  /** The shortcode B2C pays from (default: shortcode). */
  b2cShortcode?: string;
  initiatorName: string;
  /** Encrypted with Safaricom's certificate by the operator; sent as given. */
  securityCredential: string;
  /** Per request (default 10 s). */
  timeoutMs?: number;
  clock: Clock;
  fetch?: typeof fetch;
}

/**
 * - unreachable: no answer at all (connection refused, DNS): the request did not arrive;
 * - timeout: sent, no answer in time: it may have arrived (a B2C must then be treated as SENT);
 * - auth: the credentials were refused;
 * - duplicate: B2C v3 already has this OriginatorConversationID (the earlier send arrived);
 * - processing: STK Push Query's "The transaction is being processed";
 * - rejected: Daraja refused the request (4xx, or a 500.001.1001 business error): do not resend as is;
 * - unavailable: 5xx or a spike arrest: try again later.
 */
export type DarajaErrorKind =
  'unreachable' | 'timeout' | 'auth' | 'duplicate' | 'processing' | 'rejected' | 'unavailable';

export class DarajaError extends Error {
  constructor(
    readonly kind: DarajaErrorKind,
    message: string,
    readonly status?: number,
    readonly errorCode?: string,
  ) {
    super(message);
    this.name = 'DarajaError';
  }

  /** Whether sending the same request again later is safe and may succeed. */
  get retryable(): boolean {
    return this.kind === 'unreachable' || this.kind === 'unavailable' || this.kind === 'timeout';
  }
}

/** YYYYMMDDHHmmss in East Africa Time (UTC+3 all year), the form of Daraja's Timestamp. */
export function eatTimestamp(at: Date): string {
  return new Date(at.getTime() + 3 * 3600_000).toISOString().replace(/[-T:]/g, '').slice(0, 14);
}

/** STK Push's Password: base64(shortcode + passkey + timestamp). */
export function stkPassword(shortcode: string, passkey: string, timestamp: string): string {
  return Buffer.from(`${shortcode}${passkey}${timestamp}`).toString('base64');
}

// Token errors differ per API (fixtures README, uncertain 7): each means "refresh and retry once".
const TOKEN_ERRORS = new Set(['404.001.03', '404.001.04', '400.003.01', '401.002.01']);

export interface StkPushInput {
  amount: number;
  phone: string;
  callbackUrl: string;
  /** ≤ 12 characters (longer is cut). */
  accountReference: string;
  /** ≤ 13 characters (longer is cut). */
  description: string;
}

export type StkQueryAnswer =
  { state: 'PROCESSING' } | { state: 'DONE'; resultCode: string; resultDesc: string; checkoutRequestId: string };

export class DarajaClient {
  private cached: { token: string; expiresAt: number } | undefined;
  private pendingToken: Promise<string> | undefined;
  private readonly fetch: typeof fetch;

  constructor(private readonly o: DarajaClientOptions) {
    this.fetch = o.fetch ?? fetch;
  }

  /** A token, from the cache until a minute before it expires; concurrent callers share one request. */
  async token(): Promise<string> {
    const now = this.o.clock.nowMs();
    if (this.cached && this.cached.expiresAt - 60_000 > now) return this.cached.token;
    this.pendingToken ??= this.fetchToken().finally(() => (this.pendingToken = undefined));
    return this.pendingToken;
  }

  private async fetchToken(): Promise<string> {
    const basic = Buffer.from(`${this.o.consumerKey}:${this.o.consumerSecret}`).toString('base64');
    const { status, body } = await this.send(
      'GET',
      '/oauth/v1/generate?grant_type=client_credentials',
      undefined,
      `Basic ${basic}`,
    );
    if (status !== 200) {
      const err = this.toError(status, body);
      throw err.kind === 'rejected' ? new DarajaError('auth', err.message, status, err.errorCode) : err;
    }
    const b = body as { access_token?: unknown; expires_in?: unknown };
    // expires_in is "3599" in most samples and 3599 on the Daraja 3.0 portal: both are accepted.
    const seconds = Number(b.expires_in);
    if (typeof b.access_token !== 'string' || !Number.isFinite(seconds))
      throw new DarajaError('unavailable', 'Daraja OAuth answered without a token', status);
    this.cached = { token: b.access_token, expiresAt: this.o.clock.nowMs() + seconds * 1000 };
    return b.access_token;
  }

  async stkPush(input: StkPushInput): Promise<{ merchantRequestId: string; checkoutRequestId: string }> {
    const timestamp = eatTimestamp(this.o.clock.now());
    const body = await this.call('/mpesa/stkpush/v1/processrequest', {
      BusinessShortCode: this.o.shortcode,
      Password: stkPassword(this.o.shortcode, this.o.passkey, timestamp),
      Timestamp: timestamp,
      TransactionType: 'CustomerPayBillOnline',
      Amount: input.amount,
      PartyA: input.phone,
      PartyB: this.o.shortcode,
      PhoneNumber: input.phone,
      CallBackURL: input.callbackUrl,
      AccountReference: input.accountReference.slice(0, 12),
      TransactionDesc: input.description.slice(0, 13),
    });
    return { merchantRequestId: String(body.MerchantRequestID), checkoutRequestId: String(body.CheckoutRequestID) };
  }

  /** What M-Pesa knows of an STK Push (no receipt, amount or phone: the fixtures README, uncertain 4). */
  async stkQuery(checkoutRequestId: string): Promise<StkQueryAnswer> {
    const timestamp = eatTimestamp(this.o.clock.now());
    try {
      const body = await this.call('/mpesa/stkpushquery/v1/query', {
        BusinessShortCode: this.o.shortcode,
        Password: stkPassword(this.o.shortcode, this.o.passkey, timestamp),
        Timestamp: timestamp,
        CheckoutRequestID: checkoutRequestId,
      });
      return {
        state: 'DONE',
        resultCode: String(body.ResultCode),
        resultDesc: String(body.ResultDesc ?? ''),
        checkoutRequestId: String(body.CheckoutRequestID ?? checkoutRequestId),
      };
    } catch (err) {
      if (err instanceof DarajaError && err.kind === 'processing') return { state: 'PROCESSING' };
      throw err;
    }
  }

  async b2c(input: {
    originatorConversationId: string;
    amount: number;
    phone: string;
    resultUrl: string;
    timeoutUrl: string;
    remarks: string;
    occasion?: string;
  }): Promise<{ conversationId: string; originatorConversationId: string }> {
    const body = await this.call('/mpesa/b2c/v3/paymentrequest', {
      OriginatorConversationID: input.originatorConversationId,
      InitiatorName: this.o.initiatorName,
      SecurityCredential: this.o.securityCredential,
      CommandID: 'BusinessPayment',
      Amount: input.amount,
      PartyA: this.o.b2cShortcode ?? this.o.shortcode,
      PartyB: input.phone,
      Remarks: input.remarks.slice(0, 100),
      QueueTimeOutURL: input.timeoutUrl,
      ResultURL: input.resultUrl,
      ...(input.occasion ? { Occassion: input.occasion.slice(0, 100) } : {}),
    });
    return {
      conversationId: String(body.ConversationID),
      originatorConversationId: String(body.OriginatorConversationID ?? input.originatorConversationId),
    };
  }

  /** Asks for a transaction by receipt or by a B2C OriginatorConversationID; the answer comes to resultUrl. */
  async transactionStatus(input: {
    transactionId?: string;
    originalConversationId?: string;
    resultUrl: string;
    timeoutUrl: string;
    remarks: string;
  }): Promise<{ conversationId: string; originatorConversationId: string }> {
    const body = await this.call('/mpesa/transactionstatus/v1/query', {
      Initiator: this.o.initiatorName,
      SecurityCredential: this.o.securityCredential,
      CommandID: 'TransactionStatusQuery',
      ...(input.transactionId ? { TransactionID: input.transactionId } : {}),
      ...(input.originalConversationId ? { OriginalConversationID: input.originalConversationId } : {}),
      PartyA: this.o.b2cShortcode ?? this.o.shortcode,
      IdentifierType: '4',
      ResultURL: input.resultUrl,
      QueueTimeOutURL: input.timeoutUrl,
      Remarks: input.remarks.slice(0, 100),
      Occasion: input.remarks.slice(0, 100),
    });
    return {
      conversationId: String(body.ConversationID),
      originatorConversationId: String(body.OriginatorConversationID),
    };
  }

  async registerC2bUrls(input: { confirmationUrl: string; validationUrl: string }): Promise<void> {
    await this.call('/mpesa/c2b/v2/registerurl', {
      ShortCode: this.o.shortcode,
      ResponseType: 'Completed',
      ConfirmationURL: input.confirmationUrl,
      ValidationURL: input.validationUrl,
    });
  }

  /** A POST with the cached token; a token error refreshes it and tries once more. */
  private async call(path: string, payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.token();
      const { status, body } = await this.send('POST', path, payload, `Bearer ${token}`);
      if (status === 200) {
        const b = (body ?? {}) as Record<string, unknown>;
        if (b.ResponseCode !== undefined && String(b.ResponseCode) !== '0')
          throw new DarajaError(
            'rejected',
            `Daraja refused: ${String(b.ResponseDescription ?? b.ResponseCode)}`,
            status,
          );
        return b;
      }
      const err = this.toError(status, body);
      if (err.errorCode && TOKEN_ERRORS.has(err.errorCode) && attempt === 0) {
        if (this.cached?.token === token) this.cached = undefined;
        continue;
      }
      throw err;
    }
  }

  private toError(status: number, body: unknown): DarajaError {
    const b = (body ?? {}) as { errorCode?: unknown; errorMessage?: unknown };
    const code = typeof b.errorCode === 'string' ? b.errorCode : undefined;
    const text = typeof b.errorMessage === 'string' ? b.errorMessage : `HTTP ${status}`;
    const message = `Daraja ${code ?? status}: ${text}`;
    if (code && TOKEN_ERRORS.has(code)) return new DarajaError('auth', message, status, code);
    if (code === '500.002.1001' && /duplicate/i.test(text)) return new DarajaError('duplicate', message, status, code);
    if (code === '500.001.1001' && /being processed/i.test(text))
      return new DarajaError('processing', message, status, code);
    if (code === '500.003.02') return new DarajaError('unavailable', message, status, code);
    if (status >= 400 && status < 500) return new DarajaError('rejected', message, status, code);
    // 500.001.1001 is a business refusal (wrong credentials, merchant unknown, subscriber locked).
    if (code?.startsWith('500.001.')) return new DarajaError('rejected', message, status, code);
    return new DarajaError('unavailable', message, status, code);
  }

  private async send(
    method: 'GET' | 'POST',
    path: string,
    payload: unknown,
    authorization: string,
  ): Promise<{ status: number; body: unknown }> {
    const url = new URL(path, this.o.baseUrl.endsWith('/') ? this.o.baseUrl : `${this.o.baseUrl}/`);
    let res: Response;
    try {
      res = await this.fetch(url, {
        method,
        headers: {
          authorization,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: payload === undefined ? undefined : JSON.stringify(payload),
        signal: AbortSignal.timeout(this.o.timeoutMs ?? 10_000),
      });
    } catch (err) {
      const name = (err as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError')
        throw new DarajaError('timeout', `Daraja ${path.split('?')[0]} did not answer in time`);
      throw new DarajaError('unreachable', `Daraja ${path.split('?')[0]} unreachable: ${(err as Error).message}`);
    }
    let body: unknown = null;
    try {
      body = await res.json();
    } catch (err) {
      if ((err as Error).name === 'TimeoutError')
        throw new DarajaError('timeout', `Daraja ${path.split('?')[0]} did not answer in time`);
      body = null;
    }
    return { status: res.status, body };
  }
}
