import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { ConsoleSmsSender, createSmsSender, FileSmsSender, HttpSmsSender } from '../src/sms/sms.js';
import { ManualClock } from '../src/shared/clock.js';
import { AppError } from '../src/shared/errors.js';

function capture() {
  const lines: string[] = [];
  return { lines, logger: pino({ level: 'info' }, { write: (l: string) => void lines.push(l) }) };
}

test('the file transport appends one JSON line per message, creating the folder', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'rd-sms-unit-'));
  try {
    const file = path.join(dir, 'nested', 'sms.log');
    const clock = new ManualClock(new Date('2030-01-02T03:04:05.000Z'));
    const sms = new FileSmsSender(file, clock);
    await sms.send('+254712345678', 'Your login code is 123456.');
    await sms.send('+254712345679', 'second');
    const lines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(lines, [
      {
        to: '+254712345678',
        text: 'Your login code is 123456.',
        encoding: 'GSM-7',
        segments: 1,
        sentAt: '2030-01-02T03:04:05.000Z',
      },
      { to: '+254712345679', text: 'second', encoding: 'GSM-7', segments: 1, sentAt: '2030-01-02T03:04:05.000Z' },
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the console transport prints the message to the log', async () => {
  const { lines, logger } = capture();
  await new ConsoleSmsSender(logger).send('+254712345678', 'Your login code is 654321.');
  assert.equal(lines.length, 1);
  assert.match(lines[0], /654321/);
});

test('the http transport posts {to, text} with the bearer token; a failure is a 502 without the text in the log', async () => {
  const received: { auth?: string; body: string }[] = [];
  let status = 200;
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ auth: req.headers.authorization, body });
      res.statusCode = status;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const { lines, logger } = capture();
  try {
    const sms = new HttpSmsSender(`http://127.0.0.1:${port}/send`, 'provider-token', logger);
    await sms.send('+254712345678', 'Your login code is 111222.');
    assert.deepEqual(received, [
      {
        auth: 'Bearer provider-token',
        body: JSON.stringify({ to: '+254712345678', text: 'Your login code is 111222.' }),
      },
    ]);
    status = 500;
    await assert.rejects(sms.send('+254712345678', 'Your login code is 333444.'), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.statusCode, 502);
      assert.equal(err.code, 'SMS_FAILED');
      return true;
    });
    assert.ok(!lines.join('\n').includes('333444'));
  } finally {
    server.close();
  }
});

test('createSmsSender follows SMS_TRANSPORT', () => {
  const logger = pino({ level: 'silent' });
  const clock = new ManualClock();
  assert.ok(createSmsSender(loadConfig({ SMS_TRANSPORT: 'console' }), logger, clock) instanceof ConsoleSmsSender);
  assert.ok(
    createSmsSender(loadConfig({ SMS_TRANSPORT: 'file', SMS_FILE: '/tmp/x.log' }), logger, clock) instanceof
      FileSmsSender,
  );
  assert.ok(
    createSmsSender(
      loadConfig({ SMS_TRANSPORT: 'http', SMS_HTTP_URL: 'https://sms.example/send' }),
      logger,
      clock,
    ) instanceof HttpSmsSender,
  );
});
