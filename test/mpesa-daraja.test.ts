// The Daraja stand-in (dev/mpesa-sandbox) and the client (src/modules/mpesa/daraja-client.ts), each
// against the fixtures in test/fixtures/mpesa/ and against each other.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { scenarioForPhone, startSandbox, type Sandbox } from '../dev/mpesa-sandbox/server.js';
import {
  CALLBACK_ACK,
  darajaPhone,
  parseB2cResult,
  parseStatusResult,
  parseStkCallback,
  shillings,
} from '../src/modules/mpesa/daraja-callbacks.js';
import { DarajaClient, DarajaError, eatTimestamp, stkPassword } from '../src/modules/mpesa/daraja-client.js';
import { ManualClock, systemClock } from '../src/shared/clock.js';

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`./fixtures/mpesa/${name}.json`, import.meta.url), 'utf8')) as {
    http: Record<string, unknown>;
    body: any;
  };

/** The shape of a JSON value: keys and value types, items of Item/ResultParameter lists by Name/Key. */
function shape(v: unknown): unknown {
  if (Array.isArray(v)) {
    const named = v.every((i) => i && typeof i === 'object' && ('Name' in i || 'Key' in i));
    if (named) return Object.fromEntries(v.map((i) => [i.Name ?? i.Key, shape(i)]).sort());
    return v.map(shape);
  }
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, shape(x)]),
    );
  return typeof v;
}

/** Callbacks received by a small server, by path. */
async function receiver() {
  const got: { path: string; body: any }[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      got.push({ path: req.url ?? '', body: JSON.parse(raw) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(CALLBACK_ACK));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { got, url, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const waitFor = async (check: () => boolean, ms = 5000) => {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('Daraja fixtures, read by the client', () => {
  test('the STK Password of the fixture is base64(shortcode + passkey + EAT timestamp)', () => {
    const req = fixture('stkpush.request').body;
    const passkey = 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919';
    assert.equal(stkPassword('174379', passkey, req.Timestamp), req.Password);
    // 10:15:30 in Nairobi is 07:15:30 UTC.
    assert.equal(eatTimestamp(new Date('2025-03-14T07:15:30Z')), '20250314101530');
    assert.equal(eatTimestamp(new Date('2025-03-14T22:00:00Z')), '20250315010000');
  });

  test('STK callbacks: success with its metadata, failures by code', () => {
    assert.deepEqual(parseStkCallback(fixture('stkpush.callback.success').body), {
      merchantRequestId: '7c1d-4e2a-b8f3-9a6e2d4c5b1f730125',
      checkoutRequestId: 'ws_CO_14032025101531482708374149',
      resultCode: '0',
      resultDesc: 'The service request is processed successfully.',
      amount: 250,
      receipt: 'TCE4H7K2PQ',
      phone: '254708374149',
    });
    for (const [name, code] of [
      ['stkpush.callback.cancelled-1032', '1032'],
      ['stkpush.callback.timeout-1037', '1037'],
      ['stkpush.callback.wrong-pin-2001', '2001'],
      ['stkpush.callback.insufficient-balance-1', '1'],
    ] as const) {
      const parsed = parseStkCallback(fixture(name).body);
      assert.equal(parsed?.resultCode, code, name);
      assert.equal(parsed?.receipt, undefined);
    }
    assert.equal(parseStkCallback({ Body: {} }), undefined);
    assert.equal(parseStkCallback('nonsense'), undefined);
  });

  test('B2C results and Transaction Status results', () => {
    assert.deepEqual(parseB2cResult(fixture('b2c.result.success').body), {
      originatorConversationId: 'pl01JPAXK3V7Q2M5N8R4T6W9Y1Z3',
      conversationId: 'AG_20250314_20107bfe02913c02849e',
      resultCode: '0',
      resultDesc: 'The service request is processed successfully.',
      receipt: 'TCE5J8M3RA',
      amount: 1500,
    });
    assert.equal(parseB2cResult(fixture('b2c.result.insufficient-funds-1').body)?.resultCode, '1');
    assert.equal(parseB2cResult(fixture('b2c.result.receiver-unsupported-2040').body)?.resultCode, '2040');
    assert.equal(parseB2cResult(fixture('b2c.queuetimeout.ASSUMED').body)?.resultCode, '1');
    const status = parseStatusResult(fixture('transactionstatus.result.success-b2c').body);
    assert.equal(status?.transactionStatus, 'Completed');
    assert.equal(status?.receipt, 'TCE5J8M3RA');
    assert.equal(status?.amount, 1500);
    assert.equal(status?.transactionOriginatorConversationId, 'pl01JPAXK3V7Q2M5N8R4T6W9Y1Z3');
    const unknown = parseStatusResult(fixture('transactionstatus.result.unknown-transaction.ASSUMED').body);
    assert.equal(unknown?.resultCode, '1');
    assert.equal(unknown?.receipt, undefined);
  });

  test('amounts are whole shillings; phones are Kenyan', () => {
    assert.equal(shillings('4500.00'), 4500);
    assert.equal(shillings(1.0), 1);
    assert.equal(shillings('12.5'), undefined);
    assert.equal(shillings('abc'), undefined);
    assert.equal(darajaPhone('+254708374149'), '254708374149');
    assert.equal(darajaPhone('+254112345678'), '254112345678');
    assert.equal(darajaPhone('+255708374149'), undefined);
    assert.equal(darajaPhone('+25470837414'), undefined);
  });
});

describe('the stand-in, driven by the client', () => {
  let sandbox: Sandbox;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  let client: DarajaClient;
  const clock = new ManualClock(Date.now());
  before(async () => {
    hooks = await receiver();
    sandbox = await startSandbox({ callbackDelayMs: 5, lateDelayMs: 200, floatBalance: 5000 });
    client = new DarajaClient({
      baseUrl: sandbox.url,
      consumerKey: 'sandbox-key',
      consumerSecret: 'sandbox-secret',
      shortcode: '174379',
      passkey: 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919',
      initiatorName: 'testapi',
      securityCredential: 'c2VjcmV0',
      clock,
      timeoutMs: 2000,
    });
  });
  after(async () => {
    await sandbox.close();
    await hooks.close();
  });

  test('OAuth: the answer has the fixture shape; wrong secret and wrong grant are the fixtures errors', async () => {
    const basic = Buffer.from('sandbox-key:sandbox-secret').toString('base64');
    const ok = await fetch(`${sandbox.url}/oauth/v1/generate?grant_type=client_credentials`, {
      headers: { authorization: `Basic ${basic}` },
    });
    assert.equal(ok.status, 200);
    assert.deepEqual(shape(await ok.json()), shape(fixture('oauth.response').body));
    const wrong = await fetch(`${sandbox.url}/oauth/v1/generate?grant_type=client_credentials`, {
      headers: { authorization: `Basic ${Buffer.from('sandbox-key:nope').toString('base64')}` },
    });
    assert.equal(wrong.status, 400);
    const wrongBody = await wrong.json();
    assert.deepEqual(shape(wrongBody), shape(fixture('error.400.008.01.oauth-invalid-authentication').body));
    assert.equal(wrongBody.errorCode, '400.008.01');
    const grant = await fetch(`${sandbox.url}/oauth/v1/generate?grant_type=password`, {
      headers: { authorization: `Basic ${basic}` },
    });
    assert.equal((await grant.json()).errorCode, '400.008.02');
  });

  test('the client caches its token until a minute before expiry, and refreshes after an invalid-token answer', async () => {
    const first = await client.token();
    assert.equal(await client.token(), first);
    clock.advance(3599_000 - 59_000);
    const second = await client.token();
    assert.notEqual(second, first);
    // The stand-in forgets every token: the next call gets 404.001.03, refreshes and succeeds.
    sandbox.expireTokens();
    const push = await client.stkPush({
      amount: 10,
      phone: '254708374149',
      callbackUrl: `${hooks.url}/stk/a`,
      accountReference: 'PKG1',
      description: 'Delivery',
    });
    assert.match(push.checkoutRequestId, /^ws_CO_/);
    assert.notEqual(await client.token(), second);
  });

  test('STK Push: answer and callback as the fixtures; the query agrees', async () => {
    const token = await client.token();
    const req = fixture('stkpush.request').body;
    const timestamp = eatTimestamp(new Date());
    const raw = await fetch(`${sandbox.url}/mpesa/stkpush/v1/processrequest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        ...req,
        Password: stkPassword('174379', sandbox.options.passkey, timestamp),
        Timestamp: timestamp,
        CallBackURL: `${hooks.url}/stk/raw`,
      }),
    });
    assert.equal(raw.status, 200);
    const answer = await raw.json();
    assert.deepEqual(shape(answer), shape(fixture('stkpush.response').body));
    await waitFor(() => hooks.got.some((g) => g.path === '/stk/raw'));
    const cb = hooks.got.find((g) => g.path === '/stk/raw')!.body;
    assert.deepEqual(shape(cb), shape(fixture('stkpush.callback.success').body));
    const parsed = parseStkCallback(cb)!;
    assert.equal(parsed.amount, 250);
    assert.equal(parsed.phone, '254708374149');
    assert.equal(parsed.checkoutRequestId, answer.CheckoutRequestID);
    const query = await client.stkQuery(answer.CheckoutRequestID);
    assert.deepEqual(query, {
      state: 'DONE',
      resultCode: '0',
      resultDesc: 'The service request is processed successfully.',
      checkoutRequestId: answer.CheckoutRequestID,
    });
  });

  test('STK errors on demand: magic numbers give the fixtures codes; wrong password, bad phone are refused', async () => {
    for (const [phone, name, code] of [
      ['254700000201', 'stkpush.callback.wrong-pin-2001', 2001],
      ['254700000132', 'stkpush.callback.cancelled-1032', 1032],
      ['254700000137', 'stkpush.callback.timeout-1037', 1037],
      ['254700000101', 'stkpush.callback.insufficient-balance-1', 1],
    ] as const) {
      const path = `/stk/${code}`;
      const { checkoutRequestId } = await client.stkPush({
        amount: 5,
        phone,
        callbackUrl: hooks.url + path,
        accountReference: 'X',
        description: 'Y',
      });
      await waitFor(() => hooks.got.some((g) => g.path === path));
      const body = hooks.got.find((g) => g.path === path)!.body;
      assert.deepEqual(shape(body), shape(fixture(name).body));
      assert.equal(body.Body.stkCallback.ResultCode, code);
      const q = await client.stkQuery(checkoutRequestId);
      assert.equal(q.state === 'DONE' && q.resultCode, String(code));
    }
    await assert.rejects(
      client.stkPush({
        amount: 5,
        phone: '254700000240',
        callbackUrl: hooks.url,
        accountReference: 'X',
        description: 'Y',
      }),
      (err: DarajaError) =>
        err.kind === 'rejected' && err.errorCode === '400.002.02' && /PhoneNumber/.test(err.message),
    );
    const bad = new DarajaClient({ ...(client as any).o, passkey: 'wrong' });
    await assert.rejects(
      bad.stkPush({
        amount: 5,
        phone: '254708374149',
        callbackUrl: hooks.url,
        accountReference: 'X',
        description: 'Y',
      }),
      (err: DarajaError) =>
        err.kind === 'rejected' && err.errorCode === '500.001.1001' && /Wrong credentials/.test(err.message),
    );
    await assert.rejects(
      client.stkQuery('ws_CO_unknown'),
      (err: DarajaError) => err.kind === 'rejected' && err.errorCode === '400.002.02',
    );
  });

  test('deliveries: late, twice, never, and out of order', async () => {
    const push = (phone: string, path: string) =>
      client.stkPush({ amount: 1, phone, callbackUrl: hooks.url + path, accountReference: 'X', description: 'Y' });
    const count = (path: string) => hooks.got.filter((g) => g.path === path).length;
    await push('254700006149', '/twice');
    await push('254700007149', '/never');
    await push('254700005149', '/late');
    await waitFor(() => count('/twice') === 2);
    assert.equal(count('/late'), 0, 'the late one is not there yet');
    await waitFor(() => count('/late') === 1);
    await sandbox.idle();
    assert.equal(count('/never'), 0);
    assert.deepEqual(scenarioForPhone('254700008132'), { outcome: 'cancelled', delivery: 'out-of-order' });
    await push('254700008149', '/first');
    await push('254708374149', '/second');
    await waitFor(() => count('/first') === 1);
    const order = hooks.got.map((g) => g.path).filter((p) => p === '/first' || p === '/second');
    assert.deepEqual(order, ['/second', '/first']);
  });

  test('B2C v3: answer and result as the fixtures; a reused OriginatorConversationID is the duplicate error', async () => {
    const input = {
      originatorConversationId: 'line-1',
      amount: 1500,
      phone: '254708374149',
      resultUrl: `${hooks.url}/b2c/1/result`,
      timeoutUrl: `${hooks.url}/b2c/1/timeout`,
      remarks: 'Driver payout',
    };
    const sent = await client.b2c(input);
    assert.equal(sent.originatorConversationId, 'line-1');
    await waitFor(() => hooks.got.some((g) => g.path === '/b2c/1/result'));
    const result = hooks.got.find((g) => g.path === '/b2c/1/result')!.body;
    assert.deepEqual(shape(result), shape(fixture('b2c.result.success').body));
    assert.equal(parseB2cResult(result)?.amount, 1500);
    await assert.rejects(client.b2c(input), (err: DarajaError) => err.kind === 'duplicate');
    // The float is 5000 - 1500: 4000 is more than is left.
    await client.b2c({
      ...input,
      originatorConversationId: 'line-2',
      amount: 4000,
      resultUrl: `${hooks.url}/b2c/2/result`,
    });
    await waitFor(() => hooks.got.some((g) => g.path === '/b2c/2/result'));
    const poor = hooks.got.find((g) => g.path === '/b2c/2/result')!.body;
    assert.deepEqual(shape(poor), shape(fixture('b2c.result.insufficient-funds-1').body));
    await client.b2c({
      ...input,
      originatorConversationId: 'line-3',
      phone: '254700000240',
      resultUrl: `${hooks.url}/b2c/3/result`,
    });
    await waitFor(() => hooks.got.some((g) => g.path === '/b2c/3/result'));
    assert.equal(hooks.got.find((g) => g.path === '/b2c/3/result')!.body.Result.ResultCode, 2040);
    await client.b2c({
      ...input,
      originatorConversationId: 'line-4',
      phone: '254700000137',
      timeoutUrl: `${hooks.url}/b2c/4/timeout`,
    });
    await waitFor(() => hooks.got.some((g) => g.path === '/b2c/4/timeout'));
    assert.deepEqual(
      shape(hooks.got.find((g) => g.path === '/b2c/4/timeout')!.body),
      shape(fixture('b2c.queuetimeout.ASSUMED').body),
    );
  });

  test('Transaction Status: a B2C found by its OriginatorConversationID, an unknown id not found', async () => {
    const answer = await client.transactionStatus({
      originalConversationId: 'line-1',
      resultUrl: `${hooks.url}/status/1/result`,
      timeoutUrl: `${hooks.url}/status/1/timeout`,
      remarks: 'Payout check',
    });
    assert.ok(answer.conversationId.startsWith('AG_'));
    await waitFor(() => hooks.got.some((g) => g.path === '/status/1/result'));
    const body = hooks.got.find((g) => g.path === '/status/1/result')!.body;
    assert.deepEqual(shape(body), shape(fixture('transactionstatus.result.success-b2c').body));
    const parsed = parseStatusResult(body)!;
    assert.equal(parsed.originatorConversationId, answer.originatorConversationId);
    assert.equal(parsed.transactionOriginatorConversationId, 'line-1');
    assert.equal(parsed.amount, 1500);
    await client.transactionStatus({
      originalConversationId: 'never-sent',
      resultUrl: `${hooks.url}/status/2/result`,
      timeoutUrl: `${hooks.url}/status/2/timeout`,
      remarks: 'x',
    });
    await waitFor(() => hooks.got.some((g) => g.path === '/status/2/result'));
    const unknown = hooks.got.find((g) => g.path === '/status/2/result')!.body;
    assert.deepEqual(shape(unknown), shape(fixture('transactionstatus.result.unknown-transaction.ASSUMED').body));
  });

  test('C2B: register refuses URLs with the words Daraja refuses; simulate confirms to the registered URL', async () => {
    await assert.rejects(
      client.registerC2bUrls({ confirmationUrl: `${hooks.url}/mpesa/c`, validationUrl: `${hooks.url}/v` }),
      (err: DarajaError) => err.errorCode === '400.002.02',
    );
    await client.registerC2bUrls({
      confirmationUrl: `${hooks.url}/c2b/confirmation`,
      validationUrl: `${hooks.url}/c2b/validation`,
    });
    const token = await client.token();
    const res = await fetch(`${sandbox.url}/mpesa/c2b/v2/simulate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        ShortCode: '174379',
        CommandID: 'CustomerPayBillOnline',
        Amount: 4500,
        Msisdn: '254708374149',
        BillRefNumber: 'BZ4K7Q',
      }),
    });
    assert.equal(res.status, 200);
    await waitFor(() => hooks.got.some((g) => g.path === '/c2b/confirmation'));
    const body = hooks.got.find((g) => g.path === '/c2b/confirmation')!.body;
    assert.deepEqual(shape(body), shape(fixture('c2b.confirmation.request.v2-masked').body));
    assert.equal(body.TransAmount, '4500.00');
  });

  test('errors: Daraja down is unreachable, a slow Daraja a timeout, a wrong Content-Type 400.002.02', async () => {
    const down = new DarajaClient({ ...(client as any).o, baseUrl: 'http://127.0.0.1:9', clock: systemClock });
    await assert.rejects(down.token(), (err: DarajaError) => err.kind === 'unreachable' && err.retryable);
    const slow = createServer(() => {});
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const slowClient = new DarajaClient({
      ...(client as any).o,
      baseUrl: `http://127.0.0.1:${(slow.address() as AddressInfo).port}`,
      timeoutMs: 100,
      clock: systemClock,
    });
    await assert.rejects(slowClient.token(), (err: DarajaError) => err.kind === 'timeout');
    slow.closeAllConnections();
    slow.close();
    const token = await client.token();
    const res = await fetch(`${sandbox.url}/mpesa/stkpush/v1/processrequest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      body: '{}',
    });
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.deepEqual(shape(body), shape(fixture('error.400.002.02.bad-request').body));
    assert.equal(body.errorMessage, 'Bad Request - Invalid BusinessShortCode');
  });
});
