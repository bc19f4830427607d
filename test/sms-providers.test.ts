// The Twilio and Africa's Talking transports against a local server that checks each request as
// the provider would and answers as the provider does.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { ManualClock } from '../src/shared/clock.js';
import { AppError } from '../src/shared/errors.js';
import { AfricasTalkingSmsSender, createSmsSender, TwilioSmsSender, type RetryPolicy } from '../src/sms/sms.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  form: Record<string, string>;
}

type Handler = (seen: Seen, res: ServerResponse) => void;
let handler: Handler = (_seen, res) => res.end();
const seen: Seen[] = [];
let baseUrl = '';
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const entry = {
      method: req.method!,
      url: req.url!,
      headers: req.headers,
      form: Object.fromEntries(new URLSearchParams(body)),
    };
    seen.push(entry);
    handler(entry, res);
  });
});

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(() => server.close());

const FAST: RetryPolicy = { attempts: 3, timeoutMs: 2_000, backoffMs: [5, 5], maxWaitMs: 50 };
const TEXT = 'Your login code is 482913.';

function capture() {
  const lines: string[] = [];
  return { lines, logger: pino({ level: 'info' }, { write: (l: string) => void lines.push(l) }) };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

// Twilio: basic auth with the account SID, form fields To/From/Body, 201 with the message resource.
const twilioHandler =
  (fail: (n: number) => { status: number; body: unknown; headers?: Record<string, string> } | undefined): Handler =>
  (s, res) => {
    const auth = Buffer.from('AC0123456789abcdef:tw-auth-token').toString('base64');
    if (s.method !== 'POST' || s.url !== '/2010-04-01/Accounts/AC0123456789abcdef/Messages.json')
      return json(res, 404, { code: 20404, message: 'not found' });
    if (s.headers.authorization !== `Basic ${auth}`) return json(res, 401, { code: 20003, message: 'Authenticate' });
    if (!String(s.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
      return json(res, 400, { code: 0, message: 'form expected' });
    const failure = fail(seen.length);
    if (failure) return json(res, failure.status, failure.body, failure.headers);
    if (!/^\+\d{8,15}$/.test(s.form.To ?? '') || !s.form.Body || !(s.form.From || s.form.MessagingServiceSid)) {
      return json(res, 400, { code: 21211, message: "The 'To' number is not a valid phone number.", status: 400 });
    }
    json(res, 201, { sid: 'SM123', status: 'queued', to: s.form.To, body: s.form.Body });
  };

function twilio(logger = pino({ level: 'silent' })) {
  return new TwilioSmsSender(
    { accountSid: 'AC0123456789abcdef', authToken: 'tw-auth-token', from: '+15005550006', baseUrl },
    logger,
    FAST,
  );
}

test('twilio: posts To/From/Body with basic auth to the account Messages resource', async () => {
  seen.length = 0;
  handler = twilioHandler(() => undefined);
  await twilio().send('+254712345678', TEXT);
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0].form, { To: '+254712345678', From: '+15005550006', Body: TEXT });
  assert.equal(seen[0].headers.accept, 'application/json');
});

test('twilio: a messaging service SID is sent as MessagingServiceSid', async () => {
  seen.length = 0;
  handler = twilioHandler(() => undefined);
  await new TwilioSmsSender(
    { accountSid: 'AC0123456789abcdef', authToken: 'tw-auth-token', from: 'MG42', baseUrl },
    pino({ level: 'silent' }),
    FAST,
  ).send('+254712345678', TEXT);
  assert.deepEqual(seen[0].form, { To: '+254712345678', MessagingServiceSid: 'MG42', Body: TEXT });
});

test('twilio: 5xx and 429 are retried (Retry-After honoured); the third success is a success', async () => {
  seen.length = 0;
  handler = twilioHandler((n) =>
    n === 1
      ? { status: 503, body: { code: 20503, message: 'Service unavailable' } }
      : n === 2
        ? { status: 429, body: { code: 20429, message: 'Too Many Requests' }, headers: { 'retry-after': '0' } }
        : undefined,
  );
  await twilio().send('+254712345678', TEXT);
  assert.equal(seen.length, 3);
});

test('twilio: a 4xx refusal is not retried, is a 502 SMS_FAILED, and the log has the provider error but not the text', async () => {
  seen.length = 0;
  handler = twilioHandler(() => undefined);
  const { lines, logger } = capture();
  await assert.rejects(
    twilio(logger).send('+2547', TEXT),
    (err: unknown) => err instanceof AppError && err.statusCode === 502 && err.code === 'SMS_FAILED',
  );
  assert.equal(seen.length, 1);
  const log = lines.join('\n');
  assert.match(log, /not a valid phone number/);
  assert.match(log, /Twilio error 21211/);
  assert.ok(!log.includes('482913'));
});

test('twilio: a provider that keeps failing is tried three times, then 502', async () => {
  seen.length = 0;
  handler = twilioHandler(() => ({ status: 500, body: { code: 20500, message: 'Internal Server Error' } }));
  await assert.rejects(
    twilio().send('+254712345678', TEXT),
    (err: unknown) => err instanceof AppError && err.statusCode === 502,
  );
  assert.equal(seen.length, 3);
});

// Africa's Talking: apiKey header, form username/to/message/from, 201 with per-recipient status codes.
const atHandler =
  (recipient: (n: number) => { statusCode: number; status: string } | { http: number }): Handler =>
  (s, res) => {
    if (s.method !== 'POST' || s.url !== '/version1/messaging') return json(res, 404, {});
    if (s.headers.apikey !== 'at-api-key') {
      res.writeHead(401, { 'content-type': 'text/plain' });
      return res.end('The supplied authentication is invalid');
    }
    if (s.headers.accept !== 'application/json') return json(res, 406, {});
    if (s.form.username !== 'acme' || !s.form.to || !s.form.message) {
      res.writeHead(400, { 'content-type': 'text/plain' });
      return res.end('Request is missing required form field');
    }
    const r = recipient(seen.length);
    if ('http' in r) {
      res.writeHead(r.http, { 'content-type': 'text/plain' });
      return res.end('gateway trouble');
    }
    json(res, 201, {
      SMSMessageData: {
        Message: r.statusCode === 101 ? 'Sent to 1/1 Total Cost: KES 0.8000' : 'Sent to 0/1 Total Cost: 0',
        Recipients: [
          { statusCode: r.statusCode, number: s.form.to, status: r.status, cost: 'KES 0.8000', messageId: 'ATXid_1' },
        ],
      },
    });
  };

function africasTalking(apiKey = 'at-api-key', logger = pino({ level: 'silent' })) {
  return new AfricasTalkingSmsSender({ username: 'acme', apiKey, from: 'ACME', baseUrl }, logger, FAST);
}

test("africa's talking: posts username/to/message/from with the apiKey header; status 101 is sent", async () => {
  seen.length = 0;
  handler = atHandler(() => ({ statusCode: 101, status: 'Success' }));
  await africasTalking().send('+254712345678', TEXT);
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0].form, { username: 'acme', to: '+254712345678', message: TEXT, from: 'ACME' });
});

test("africa's talking: a recipient refused (403 InvalidPhoneNumber) is a 502, not retried, logged without the text", async () => {
  seen.length = 0;
  handler = atHandler(() => ({ statusCode: 403, status: 'InvalidPhoneNumber' }));
  const { lines, logger } = capture();
  await assert.rejects(
    africasTalking('at-api-key', logger).send('+254712345678', TEXT),
    (err: unknown) => err instanceof AppError && err.code === 'SMS_FAILED',
  );
  assert.equal(seen.length, 1);
  assert.match(lines.join('\n'), /InvalidPhoneNumber/);
  assert.ok(!lines.join('\n').includes('482913'));
});

test("africa's talking: a wrong API key (401) is not retried; gateway errors (HTTP 5xx, recipient 500) are", async () => {
  seen.length = 0;
  handler = atHandler(() => ({ statusCode: 101, status: 'Success' }));
  await assert.rejects(africasTalking('wrong-key').send('+254712345678', TEXT), AppError);
  assert.equal(seen.length, 1);

  seen.length = 0;
  handler = atHandler((n) =>
    n === 1
      ? { http: 502 }
      : n === 2
        ? { statusCode: 500, status: 'InternalServerError' }
        : { statusCode: 101, status: 'Success' },
  );
  await africasTalking().send('+254712345678', TEXT);
  assert.equal(seen.length, 3);
});

test('a provider that never answers is given up on after the per-attempt timeout', async () => {
  seen.length = 0;
  handler = () => undefined; // never responds
  const sender = new TwilioSmsSender(
    { accountSid: 'AC0123456789abcdef', authToken: 'tw-auth-token', from: '+15005550006', baseUrl },
    pino({ level: 'silent' }),
    { attempts: 2, timeoutMs: 200, backoffMs: [5], maxWaitMs: 10 },
  );
  const started = Date.now();
  await assert.rejects(sender.send('+254712345678', TEXT), AppError);
  assert.equal(seen.length, 2);
  assert.ok(Date.now() - started < 5_000);
});

test('createSmsSender builds the provider transports from configuration', () => {
  const logger = pino({ level: 'silent' });
  const clock = new ManualClock();
  const tw = loadConfig({
    SMS_TRANSPORT: 'twilio',
    TWILIO_ACCOUNT_SID: 'AC1',
    TWILIO_AUTH_TOKEN: 't',
    TWILIO_FROM: '+15005550006',
  });
  assert.ok(createSmsSender(tw, logger, clock) instanceof TwilioSmsSender);
  const at = loadConfig({ SMS_TRANSPORT: 'africastalking', AT_USERNAME: 'sandbox', AT_API_KEY: 'k' });
  assert.ok(createSmsSender(at, logger, clock) instanceof AfricasTalkingSmsSender);
});
