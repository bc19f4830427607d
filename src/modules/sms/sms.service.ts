// Every SMS the server writes (contract section 27): its text from the catalog in the recipient's
// language, its GSM-7 or UCS-2 segments counted before it is sent, and a line in the log that
// GET /admin/sms lists. A message that holds a code or a tracking link (a bearer credential) is
// logged without its text.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { translate, type MessageKey, type MessageValues } from '../../i18n/i18n.js';
import type { Clock } from '../../shared/clock.js';
import type { Locale } from '../../shared/locales.js';
import { decodeCursor, toPage } from '../../shared/pagination.js';
import { countSegments } from '../../sms/segments.js';
import type { SmsSender } from '../../sms/sms.js';
import type { SmsLogRepository } from './sms-log.repository.js';

/** The templates, each with whether its text is a secret to keep out of the log. */
export const SMS_TEMPLATES = {
  'code.LOGIN': { key: 'sms.code.LOGIN', secret: true },
  'code.REGISTER': { key: 'sms.code.REGISTER', secret: true },
  'code.PASSWORD_RESET': { key: 'sms.code.PASSWORD_RESET', secret: true },
  accountApproved: { key: 'sms.accountApproved', secret: false },
  rideUnaccepted: { key: 'sms.rideUnaccepted', secret: false },
  'tracking.CREATED': { key: 'sms.tracking.CREATED', secret: true },
  'tracking.IN_TRANSIT': { key: 'sms.tracking.IN_TRANSIT', secret: true },
} as const satisfies Record<string, { key: MessageKey; secret: boolean }>;
export type SmsTemplate = keyof typeof SMS_TEMPLATES;

export interface SmsMessage {
  template: SmsTemplate;
  locale: Locale;
  values?: MessageValues;
}

/** +254712345678 → +2547*****678: enough to tell numbers apart in the log, not enough to call one. */
export function maskRecipient(phone: string): string {
  if (phone.length <= 8) return `${phone.slice(0, 2)}***${phone.slice(-2)}`;
  return `${phone.slice(0, 5)}${'*'.repeat(phone.length - 8)}${phone.slice(-3)}`;
}

export function renderSms(message: SmsMessage): string {
  return translate(message.locale, SMS_TEMPLATES[message.template].key, message.values);
}

export class SmsService {
  constructor(private readonly deps: { sender: SmsSender; log: SmsLogRepository; clock: Clock; logger: Logger }) {}

  /** Whether sending finishes locally at once (console, file) rather than waiting on a provider. */
  get local(): boolean {
    return this.deps.sender.local === true;
  }

  /** Sends and logs; a provider's failure is logged FAILED and thrown on (callers decide whether it matters). */
  async send(to: string, message: SmsMessage): Promise<void> {
    const text = renderSms(message);
    const { encoding, segments } = countSegments(text);
    const log = (status: 'SENT' | 'FAILED') =>
      this.deps.log
        .insert({
          id: randomUUID(),
          sent_at: this.deps.clock.now(),
          recipient: maskRecipient(to),
          template: message.template,
          locale: message.locale,
          encoding,
          segments,
          status,
          text: SMS_TEMPLATES[message.template].secret ? null : text,
        })
        .catch((err: Error) => this.deps.logger.warn({ err: err.message }, 'the SMS log could not be written'));
    try {
      await this.deps.sender.send(to, text);
    } catch (err) {
      await log('FAILED');
      throw err;
    }
    await log('SENT');
  }

  async list(query: { cursor?: string; limit?: number }) {
    const limit = query.limit ?? 20;
    const rows = await this.deps.log.list({ cursor: decodeCursor(query.cursor), limit });
    return toPage(
      rows.map((r) => ({ ...r, createdAt: new Date(r.sent_at) })),
      limit,
      (r) => ({
        id: r.id,
        sentAt: r.createdAt.toISOString(),
        recipient: r.recipient,
        template: r.template,
        locale: r.locale,
        encoding: r.encoding,
        segments: r.segments,
        status: r.status,
        text: r.text,
      }),
    );
  }
}
