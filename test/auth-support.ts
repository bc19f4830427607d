// Shared by the auth, admin and rate-limit tests: an app whose SMS go to a temp file, and readers.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTestApp, type TestApp, type TestAppOptions } from './helpers/app.js';

export interface SmsTestApp extends TestApp {
  smsFile: string;
  /** Every SMS sent so far, oldest first. */
  messages(): { to: string; text: string; sentAt: string }[];
  /** The code in the last SMS sent to `phone`. */
  lastCode(phone: string): string;
}

export async function buildSmsTestApp(options: TestAppOptions = {}): Promise<SmsTestApp> {
  const dir = mkdtempSync(path.join(tmpdir(), 'rd-sms-'));
  const smsFile = path.join(dir, 'sms.log');
  const t = await buildTestApp({ ...options, env: { SMS_TRANSPORT: 'file', SMS_FILE: smsFile, ...options.env } });
  const messages = () => {
    try {
      return readFileSync(smsFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { to: string; text: string; sentAt: string });
    } catch {
      return [];
    }
  };
  return {
    ...t,
    smsFile,
    messages,
    lastCode(phone: string) {
      const last = messages()
        .filter((m) => m.to === phone)
        .at(-1);
      const code = last && /\b(\d{6})\b/.exec(last.text)?.[1];
      if (!code) throw new Error(`no code sent to ${phone}`);
      return code;
    },
    close: async () => {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A code that is not `code` (for wrong-code tests). */
export function wrongCode(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(6, '0');
}
