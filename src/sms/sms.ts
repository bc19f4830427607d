// Outgoing SMS behind one interface: console (development), file (tests, local runs) or http (a provider).
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from 'pino';
import { request } from 'undici';
import type { Config } from '../config.js';
import type { Clock } from '../shared/clock.js';
import { AppError } from '../shared/errors.js';

export interface SmsSender {
  send(to: string, text: string): Promise<void>;
}

export class ConsoleSmsSender implements SmsSender {
  constructor(private readonly logger: Logger) {}
  async send(to: string, text: string): Promise<void> {
    // Printing the message is this transport's purpose (refused in production by config).
    this.logger.info({ sms: { to, text } }, `SMS to ${to}: ${text}`);
  }
}

export class FileSmsSender implements SmsSender {
  private ready: Promise<unknown> | undefined;
  constructor(
    private readonly file: string,
    private readonly clock: Clock,
  ) {}
  async send(to: string, text: string): Promise<void> {
    this.ready ??= mkdir(path.dirname(this.file), { recursive: true });
    await this.ready;
    await appendFile(this.file, `${JSON.stringify({ to, text, sentAt: this.clock.now().toISOString() })}\n`);
  }
}

export class HttpSmsSender implements SmsSender {
  constructor(
    private readonly url: string,
    private readonly token: string | undefined,
    private readonly logger: Logger,
    private readonly timeoutMs = 10_000,
  ) {}
  async send(to: string, text: string): Promise<void> {
    try {
      const res = await request(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        },
        body: JSON.stringify({ to, text }),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      await res.body.dump();
      if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`SMS provider answered ${res.statusCode}`);
    } catch (err) {
      // Never log the text: it carries the code.
      this.logger.error({ err: (err as Error).message, to }, 'SMS could not be sent');
      throw new AppError(502, 'SMS_FAILED', 'The SMS could not be sent; try again later');
    }
  }
}

export function createSmsSender(config: Config, logger: Logger, clock: Clock): SmsSender {
  switch (config.smsTransport) {
    case 'file':
      return new FileSmsSender(config.smsFile, clock);
    case 'http':
      return new HttpSmsSender(config.smsHttpUrl!, config.smsHttpToken, logger);
    default:
      return new ConsoleSmsSender(logger);
  }
}
