// SMS: the transport for one-time codes and recipient messages, and its provider's credentials.
import path from 'node:path';
import type { EnvReader } from './env-reader.js';
import type { ServerConfig } from './server.js';

export type SmsTransport = 'console' | 'file' | 'http' | 'twilio' | 'africastalking';
const SMS_TRANSPORTS: SmsTransport[] = ['console', 'file', 'http', 'twilio', 'africastalking'];

export interface SmsConfig {
  transport: SmsTransport;
  file: string;
  httpUrl: string | undefined;
  httpToken: string | undefined;
  /** Provider credentials, set for the transport that uses them. */
  twilio: { accountSid: string; authToken: string; from: string; baseUrl: string } | undefined;
  africasTalking: { username: string; apiKey: string; from: string | undefined; baseUrl: string } | undefined;
}

export function readSms(r: EnvReader, { isProduction, dataDir }: ServerConfig): SmsConfig {
  const transport = r.oneOf('SMS_TRANSPORT', SMS_TRANSPORTS, 'console');
  const httpUrl = r.url('SMS_HTTP_URL', ['http:', 'https:']);
  if (transport === 'http' && httpUrl === undefined) r.problem('SMS_HTTP_URL is required when SMS_TRANSPORT=http');
  const required = (names: string[]) => {
    const missing = names.filter((name) => r.get(name) === undefined);
    if (missing.length) r.problem(`${missing.join(', ')} required when SMS_TRANSPORT=${transport}`);
    return missing.length === 0;
  };
  const twilioBaseUrl = r.url('TWILIO_BASE_URL', ['http:', 'https:']) ?? 'https://api.twilio.com';
  const twilio =
    transport === 'twilio' && required(['TWILIO_ACCOUNT_SID', 'TWILIO_AUTH_TOKEN', 'TWILIO_FROM'])
      ? {
          accountSid: r.get('TWILIO_ACCOUNT_SID')!,
          authToken: r.get('TWILIO_AUTH_TOKEN')!,
          from: r.get('TWILIO_FROM')!,
          baseUrl: twilioBaseUrl,
        }
      : undefined;
  const atBaseUrl = r.url('AT_BASE_URL', ['http:', 'https:']);
  const africasTalking =
    transport === 'africastalking' && required(['AT_USERNAME', 'AT_API_KEY'])
      ? {
          username: r.get('AT_USERNAME')!,
          apiKey: r.get('AT_API_KEY')!,
          from: r.get('AT_FROM'),
          baseUrl:
            atBaseUrl ??
            (r.get('AT_USERNAME') === 'sandbox'
              ? 'https://api.sandbox.africastalking.com'
              : 'https://api.africastalking.com'),
        }
      : undefined;
  const allowFileInProduction = r.bool('SMS_ALLOW_FILE_IN_PRODUCTION', false);
  if (isProduction && transport === 'console')
    r.problem('SMS_TRANSPORT=console is refused in production (use twilio, africastalking or http)');
  if (isProduction && transport === 'file' && !allowFileInProduction) {
    r.problem('SMS_TRANSPORT=file is refused in production unless SMS_ALLOW_FILE_IN_PRODUCTION=true');
  }
  return {
    transport,
    file: r.str('SMS_FILE', path.join(dataDir, 'sms.log')),
    httpUrl,
    httpToken: r.get('SMS_HTTP_TOKEN'),
    twilio,
    africasTalking,
  };
}
