// The SMS codes of section 4: the code steps of registration, login and password reset, the
// per-phone hourly cap, checking a code (wrong ones counted), single use, resending, the purge.
import { createHmac, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Executor } from '../../db/executor.js';
import type { OtpPurpose } from '../../db/tables/auth.js';
import type { Clock } from '../../shared/clock.js';
import { tooManyRequests, unauthorized } from '../../shared/errors.js';
import type { LocalesService } from '../locales/locales.service.js';
import type { SmsService } from '../sms/sms.service.js';
import type { CodeStepRow, CodesRepository } from './codes.repository.js';
import { sha256 } from './sessions.service.js';

export const MAX_CODES_PER_PHONE_PER_HOUR = 10;
const HOUR_MS = 3_600_000;

type CodesConfig = {
  auth: Pick<Config['auth'], 'loginSessionTtlMs' | 'otpTtlMs' | 'otpMaxAttempts' | 'otpMaxResends'>;
};

export interface CodesServiceDeps {
  repo: CodesRepository;
  clock: Clock;
  config: CodesConfig;
  /** Key for the HMAC under which codes are stored (derived from the JWT secret). */
  codeKey: string;
  sms: SmsService;
  locales: LocalesService;
}

export const sessionInvalid = () =>
  unauthorized('Verification session is invalid or has expired; start again', 'OTP_SESSION_INVALID');

/**
 * `+*******78`: only the last two digits, behind a mask of fixed width, so the answer for an unknown
 * e-mail (made-up digits) cannot be told from a real one by its country code or its length.
 */
export function maskPhone(phone: string): string {
  return `+*******${phone.slice(-2)}`;
}

export class CodesService {
  constructor(private readonly deps: CodesServiceDeps) {}

  private now(): Date {
    return this.deps.clock.now();
  }

  private codeHash(sessionId: string, code: string): string {
    return createHmac('sha256', this.deps.codeKey).update(`${sessionId}:${code}`).digest('hex');
  }

  /** Enforces the per-phone hourly cap and records one more code sent to `phone`. */
  private async reserve(phone: string): Promise<void> {
    const now = this.now();
    const since = new Date(now.getTime() - HOUR_MS);
    const sent = await this.deps.repo.listSendTimes(phone, since);
    if (sent.length >= MAX_CODES_PER_PHONE_PER_HOUR) {
      const retryMs = new Date(sent[sent.length - MAX_CODES_PER_PHONE_PER_HOUR]).getTime() + HOUR_MS - now.getTime();
      throw tooManyRequests(
        'Too many codes sent to this phone number; try again later',
        retryMs / 1000,
        'OTP_PHONE_LIMIT',
      );
    }
    await this.deps.repo.deleteSendsUpTo(since, phone);
    await this.deps.repo.insertSend({ id: randomUUID(), phone, sent_at: now });
  }

  /**
   * Deletes what no request can use any more: code steps past their end, and sends older than the
   * hourly window (a phone's own old sends also go when it gets a new code). Run by a periodic sweep.
   */
  async purgeExpired(): Promise<{ codeSteps: number; sends: number }> {
    const now = this.now();
    const codeSteps = await this.deps.repo.deleteStepsEndedBy(now);
    const sends = await this.deps.repo.deleteSendsUpTo(new Date(now.getTime() - HOUR_MS));
    return { codeSteps, sends };
  }

  private newCode(): string {
    return String(randomInt(0, 1_000_000)).padStart(6, '0');
  }

  /** In the account's language (a registration has none yet: English). */
  private async send(phone: string, code: string, purpose: OtpPurpose, userId: string | null): Promise<void> {
    const { locale } = await this.deps.locales.forUser(userId);
    const minutes = Math.max(1, Math.round(this.deps.config.auth.otpTtlMs / 60_000));
    await this.deps.sms.send(phone, { template: `code.${purpose}`, locale, values: { code, minutes } });
  }

  /**
   * Stores a code step and sends its code. With `userId` null and `send` false (a password reset for
   * no account) the step is stored with a hash that no code matches and nothing is sent, so that the
   * next steps answer exactly as for a real account and can never succeed.
   */
  async start(
    purpose: OtpPurpose,
    phone: string,
    userId: string | null,
    rememberMe = false,
    send = true,
  ): Promise<string> {
    await this.reserve(phone);
    const id = randomUUID();
    const code = send ? this.newCode() : randomUUID();
    const now = this.now();
    await this.deps.repo.insertStep({
      id,
      purpose,
      user_id: userId,
      phone,
      code_hash: this.codeHash(id, code),
      code_expires_at: new Date(now.getTime() + this.deps.config.auth.otpTtlMs),
      remember_me: rememberMe,
      expires_at: new Date(now.getTime() + this.deps.config.auth.loginSessionTtlMs),
      consumed_at: null,
      created_at: now,
    });
    if (!send) return id;
    // A provider's round trip would time a reset apart from one for no account: it is not awaited.
    if (purpose === 'PASSWORD_RESET' && !this.deps.sms.local)
      void this.send(phone, code, purpose, userId).catch(() => undefined);
    else await this.send(phone, code, purpose, userId);
    return id;
  }

  private async open(sessionId: string, phone: string, purpose: OtpPurpose): Promise<CodeStepRow> {
    const row = await this.deps.repo.getStep(sessionId, purpose);
    const phoneOk = row && (phone === row.phone || (purpose === 'PASSWORD_RESET' && phone === maskPhone(row.phone)));
    if (!row || !phoneOk || row.consumed_at !== null || new Date(row.expires_at) <= this.now()) throw sessionInvalid();
    if (row.attempts >= this.deps.config.auth.otpMaxAttempts) {
      throw unauthorized('Too many wrong codes; start again', 'OTP_ATTEMPTS_EXCEEDED');
    }
    return row;
  }

  /**
   * Checks a code (constant-time) and counts a wrong one; the caller then consumes the step with
   * `consume`, in the transaction that acts on it.
   */
  async check(sessionId: string, phone: string, code: string, purpose: OtpPurpose): Promise<CodeStepRow> {
    const row = await this.open(sessionId, phone, purpose);
    const given = Buffer.from(this.codeHash(row.id, code), 'hex');
    const stored = Buffer.from(row.code_hash, 'hex');
    if (given.length !== stored.length || !timingSafeEqual(given, stored)) {
      const attempts = await this.deps.repo.addAttempt(row.id);
      if (attempts !== undefined && attempts >= this.deps.config.auth.otpMaxAttempts) {
        throw unauthorized('Too many wrong codes; start again', 'OTP_ATTEMPTS_EXCEEDED');
      }
      throw unauthorized('Invalid code', 'INVALID_OTP');
    }
    if (new Date(row.code_expires_at) <= this.now())
      throw unauthorized('Code has expired; request a new one', 'OTP_EXPIRED');
    return row;
  }

  /** Marks a checked code used; only one caller can win (single use under concurrency). */
  async consume(db: Executor, row: CodeStepRow): Promise<void> {
    if (!(await this.deps.repo.consume(db, row, this.deps.config.auth.otpMaxAttempts, this.now())))
      throw sessionInvalid();
  }

  async resendLogin(sessionId: string, phone: string): Promise<void> {
    const row = await this.open(sessionId, phone, 'LOGIN');
    const retryAfter = (new Date(row.expires_at).getTime() - this.now().getTime()) / 1000;
    const resendLimit = () =>
      tooManyRequests('No more codes can be sent for this login; log in again', retryAfter, 'OTP_RESEND_LIMIT');
    if (row.resends >= this.deps.config.auth.otpMaxResends) throw resendLimit();
    await this.reserve(row.phone);
    const code = this.newCode();
    // A new code voids the old one; the wrong-code count carries on.
    const codeExpiresAt = new Date(this.now().getTime() + this.deps.config.auth.otpTtlMs);
    if (
      !(await this.deps.repo.replaceCode(
        row.id,
        this.codeHash(row.id, code),
        codeExpiresAt,
        this.deps.config.auth.otpMaxResends,
      ))
    ) {
      throw resendLimit();
    }
    await this.send(row.phone, code, 'LOGIN', row.user_id);
  }

  /** A made-up phone for an e-mail with no account, the same every time (a password reset answers with it). */
  standInPhone(identifier: string): string {
    const digits = BigInt(
      `0x${sha256(`${this.deps.codeKey}:${identifier.trim().toLowerCase()}`).slice(0, 12)}`,
    ).toString();
    return `+${digits.padStart(12, '1').slice(0, 12)}`;
  }
}
