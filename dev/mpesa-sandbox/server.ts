// A Daraja stand-in (contract section 26): Safaricom's endpoints and bodies as the fixtures in
// test/fixtures/mpesa/ record them, with callbacks that come on time, late, twice, out of order or
// never, and failures on demand. `npm run mpesa:sandbox` runs it; tests start it in-process on a
// free port (startSandbox). Magic phone numbers and the control routes: docs/mpesa.md#the-stand-in.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';

export type Outcome =
  | 'success'
  | 'wrong-pin' // STK 2001
  | 'cancelled' // STK 1032
  | 'timeout' // STK 1037; B2C: a queue timeout callback instead of a result
  | 'insufficient' // STK 1 (the customer's balance); B2C 1 (the float)
  | 'not-mpesa'; // STK: 400.002.02 Invalid PhoneNumber at once; B2C 2040

export type Delivery = 'on-time' | 'late' | 'twice' | 'never' | 'out-of-order';

export interface Scenario {
  outcome?: Outcome;
  delivery?: Delivery;
}

const OUTCOME_BY_SUFFIX: Record<string, Outcome> = {
  '201': 'wrong-pin',
  '132': 'cancelled',
  '137': 'timeout',
  '101': 'insufficient',
  '240': 'not-mpesa',
};
const DELIVERY_BY_DIGIT: Record<string, Delivery> = {
  '5': 'late',
  '6': 'twice',
  '7': 'never',
  '8': 'out-of-order',
};

/**
 * The scenario a phone number asks for: its last three digits choose the outcome (201 wrong PIN,
 * 132 cancelled, 137 timeout, 101 insufficient balance or float, 240 not an M-Pesa number, anything
 * else success), the digit before them the delivery (5 late, 6 twice, 7 never, 8 out of order,
 * anything else on time). The sandbox MSISDN 254708374149 pays, on time.
 */
export function scenarioForPhone(phone: string): Required<Scenario> {
  const digits = String(phone);
  return {
    outcome: OUTCOME_BY_SUFFIX[digits.slice(-3)] ?? 'success',
    delivery: DELIVERY_BY_DIGIT[digits.slice(-4, -3)] ?? 'on-time',
  };
}

export interface SandboxOptions {
  port?: number;
  host?: string;
  consumerKey?: string;
  consumerSecret?: string;
  /** The STK (Lipa na M-Pesa online) shortcode and its passkey. */
  shortcode?: string;
  passkey?: string;
  initiatorName?: string;
  /** Seconds a token lives (Daraja: 3599). */
  tokenTtlSeconds?: number;
  /** Milliseconds before an on-time callback, and before a late one. */
  callbackDelayMs?: number;
  lateDelayMs?: number;
  /** Milliseconds before answering a B2C request (its result callback may then come first). */
  answerDelayMs?: number;
  /** The B2C float in whole shillings: a payment above what is left gets result 1. */
  floatBalance?: number;
  /** Per-request choice, before the phone's magic digits (return undefined to use them). */
  scenario?: (request: { api: 'stk' | 'b2c'; phone: string; amount: number; id: string }) => Scenario | undefined;
  /** Random faults over all callbacks (0..1 each), drawn from a seeded generator. */
  chaos?: { duplicate?: number; reorder?: number; lose?: number; seed?: number };
  now?: () => number;
  log?: (line: string) => void;
}

interface StkRecord {
  merchantRequestId: string;
  checkoutRequestId: string;
  phone: string;
  amount: number;
  callbackUrl: string;
  outcome: Outcome;
  /** Set once M-Pesa has finished with it (what STK Push Query answers). */
  resultCode?: number;
  receipt?: string;
}

interface PaymentRecord {
  kind: 'B2C' | 'C2B' | 'STK';
  receipt: string;
  amount: number;
  party: string;
  originatorConversationId?: string;
  conversationId?: string;
  completedAt: number;
}

export interface SentCallback {
  url: string;
  body: unknown;
  status: number | 'error';
}

export interface Sandbox {
  url: string;
  port: number;
  close(): Promise<void>;
  /** Every callback sent, in order. */
  sent: SentCallback[];
  /** Every payment M-Pesa completed, by receipt (what Transaction Status knows). */
  payments: Map<string, PaymentRecord>;
  /** Scenarios queued for the next requests (POST /sandbox/next does the same). */
  next: Scenario[];
  options: Required<Pick<SandboxOptions, 'consumerKey' | 'consumerSecret' | 'shortcode' | 'passkey'>>;
  floatBalance: number;
  /** The callbacks not yet sent (held back or waiting for their delay). */
  pending(): number;
  /** Resolves once no callback is waiting. */
  idle(timeoutMs?: number): Promise<void>;
  /** Sends every callback held back for an out-of-order delivery now. */
  flush(): void;
  /** Tokens issued, for tests that expire one. */
  expireTokens(): void;
  /** Changes (or, with undefined, ends) the random faults from now on. */
  setChaos(chaos: SandboxOptions['chaos']): void;
}

const SANDBOX_PASSKEY = 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919';
const PHONE = /^254(7|1)\d{8}$/;

class DarajaError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    readonly errorMessage: string,
  ) {
    super(errorMessage);
  }
}
const badField = (field: string) => new DarajaError(400, '400.002.02', `Bad Request - Invalid ${field}`);

/** A seeded generator (mulberry32), so that a chaos run can be replayed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** YYYYMMDDHHmmss in East Africa Time (UTC+3, no daylight saving), as Daraja writes it. */
export function eatTimestamp(ms: number): string {
  return new Date(ms + 3 * 3600_000).toISOString().replace(/[-T:]/g, '').slice(0, 14);
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const o = {
    consumerKey: opts.consumerKey ?? 'sandbox-key',
    consumerSecret: opts.consumerSecret ?? 'sandbox-secret',
    shortcode: opts.shortcode ?? '174379',
    passkey: opts.passkey ?? SANDBOX_PASSKEY,
    initiatorName: opts.initiatorName ?? 'testapi',
    tokenTtlSeconds: opts.tokenTtlSeconds ?? 3599,
    callbackDelayMs: opts.callbackDelayMs ?? 20,
    lateDelayMs: opts.lateDelayMs ?? 1500,
  };
  const now = opts.now ?? (() => Date.now());
  const log = opts.log ?? (() => {});
  const random = seeded(opts.chaos?.seed ?? 1);
  const tokens = new Map<string, number>(); // token → expiry (ms)
  const stk = new Map<string, StkRecord>();
  const b2cIds = new Set<string>();
  const payments = new Map<string, PaymentRecord>();
  const byOriginator = new Map<string, PaymentRecord>();
  const c2bUrls = new Map<string, { confirmation: string; validation: string }>();
  const sent: SentCallback[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const heldBack: (() => void)[] = [];
  let inFlight = 0;
  let counter = 0;
  const next: Scenario[] = [];

  const id = (prefix: string) => `${prefix}${(++counter).toString().padStart(6, '0')}${randomBytes(4).toString('hex')}`;
  const receipt = () =>
    'S' +
    randomBytes(9)
      .toString('base64')
      .replace(/[^A-Z0-9]/gi, '')
      .toUpperCase()
      .padEnd(9, 'X')
      .slice(0, 9);

  async function post(url: string, body: unknown): Promise<void> {
    inFlight++;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      sent.push({ url, body, status: res.status });
    } catch {
      sent.push({ url, body, status: 'error' });
    } finally {
      inFlight--;
    }
  }

  function later(ms: number, fn: () => void) {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  }

  /** Sends one callback as the delivery says, then as chaos (if any) adds. */
  function deliver(delivery: Delivery, url: string, body: unknown) {
    let mode = delivery;
    if (mode === 'on-time' && opts.chaos) {
      const r = random();
      const { duplicate = 0, reorder = 0, lose = 0 } = opts.chaos;
      if (r < lose) mode = 'never';
      else if (r < lose + duplicate) mode = 'twice';
      else if (r < lose + duplicate + reorder) mode = 'out-of-order';
    }
    const send = () => void post(url, body);
    switch (mode) {
      case 'never':
        log(`callback to ${redact(url)} dropped (never)`);
        return;
      case 'late':
        later(o.lateDelayMs, send);
        return;
      case 'twice':
        later(o.callbackDelayMs, send);
        later(o.callbackDelayMs * 3 + 10, send);
        return;
      case 'out-of-order':
        // Held until the next callback has gone (or flush()), then sent after it.
        heldBack.push(send);
        return;
      default:
        later(o.callbackDelayMs, () => {
          send();
          const held = heldBack.splice(0);
          for (const h of held) later(o.callbackDelayMs, h);
        });
    }
  }

  function pick(api: 'stk' | 'b2c', phone: string, amount: number, reqId: string): Required<Scenario> {
    const byPhone = scenarioForPhone(phone);
    const chosen = next.shift() ?? opts.scenario?.({ api, phone, amount, id: reqId }) ?? {};
    return { outcome: chosen.outcome ?? byPhone.outcome, delivery: chosen.delivery ?? byPhone.delivery };
  }

  function authorize(req: IncomingMessage) {
    const header = req.headers.authorization ?? '';
    const match = /^Bearer (.+)$/.exec(header);
    if (!match) throw new DarajaError(404, '404.001.04', 'Invalid Authentication Header');
    const expiry = tokens.get(match[1]!);
    if (expiry === undefined || expiry <= now()) throw new DarajaError(404, '404.001.03', 'Invalid Access Token');
  }

  function oauth(req: IncomingMessage, url: URL) {
    if (url.searchParams.get('grant_type') !== 'client_credentials')
      throw new DarajaError(400, '400.008.02', 'Invalid grant type passed');
    const match = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
    const [key, secret] = match ? Buffer.from(match[1]!, 'base64').toString('utf8').split(':') : [];
    if (key !== o.consumerKey || secret !== o.consumerSecret)
      throw new DarajaError(400, '400.008.01', 'Invalid Authentication passed');
    // Each new token invalidates the previous one (the portal's FAQ).
    tokens.clear();
    const token = randomBytes(21).toString('base64url');
    tokens.set(token, now() + o.tokenTtlSeconds * 1000);
    return { access_token: token, expires_in: String(o.tokenTtlSeconds) };
  }

  function checkPassword(body: Record<string, unknown>) {
    if (body.BusinessShortCode !== o.shortcode) throw new DarajaError(500, '500.001.1001', 'Merchant does not exist');
    if (typeof body.Timestamp !== 'string' || !/^\d{14}$/.test(body.Timestamp)) throw badField('Timestamp');
    const expected = Buffer.from(`${o.shortcode}${o.passkey}${body.Timestamp}`).toString('base64');
    if (body.Password !== expected)
      throw new DarajaError(500, '500.001.1001', '[MerchantValidate] - Wrong credentials');
  }

  function wholeAmount(value: unknown): number {
    const amount = typeof value === 'string' ? Number(value) : value;
    if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 1) throw badField('Amount');
    return amount;
  }

  function stkPush(body: Record<string, unknown>) {
    checkPassword(body);
    const amount = wholeAmount(body.Amount);
    const phone = String(body.PhoneNumber ?? '');
    if (!PHONE.test(phone)) throw badField('PhoneNumber');
    if (String(body.PartyA) !== phone) throw badField('PartyA');
    if (typeof body.CallBackURL !== 'string' || !/^https?:\/\//.test(body.CallBackURL)) throw badField('CallBackURL');
    const checkoutRequestId = `ws_CO_${eatTimestamp(now())}${String(counter).padStart(3, '0')}${phone.slice(3)}`;
    const merchantRequestId = `${randomBytes(2).toString('hex')}-${randomBytes(2).toString('hex')}-${randomBytes(10).toString('hex')}${++counter}`;
    const scenario = pick('stk', phone, amount, checkoutRequestId);
    if (scenario.outcome === 'not-mpesa') throw badField('PhoneNumber');
    const record: StkRecord = {
      merchantRequestId,
      checkoutRequestId,
      phone,
      amount,
      callbackUrl: body.CallBackURL,
      outcome: scenario.outcome,
    };
    stk.set(checkoutRequestId, record);
    // M-Pesa decides when the customer answers (or not): the query sees it from then on.
    const codes: Record<Outcome, number> = {
      success: 0,
      'wrong-pin': 2001,
      cancelled: 1032,
      timeout: 1037,
      insufficient: 1,
      'not-mpesa': 1,
    };
    record.resultCode = codes[scenario.outcome];
    const stkCallback: Record<string, unknown> = {
      MerchantRequestID: merchantRequestId,
      CheckoutRequestID: checkoutRequestId,
      ResultCode: record.resultCode,
      ResultDesc: STK_TEXTS[record.resultCode]!,
    };
    if (record.resultCode === 0) {
      record.receipt = receipt();
      payments.set(record.receipt, {
        kind: 'STK',
        receipt: record.receipt,
        amount,
        party: phone,
        completedAt: now(),
      });
      stkCallback.CallbackMetadata = {
        Item: [
          { Name: 'Amount', Value: amount },
          { Name: 'MpesaReceiptNumber', Value: record.receipt },
          { Name: 'Balance' },
          { Name: 'TransactionDate', Value: Number(eatTimestamp(now())) },
          { Name: 'PhoneNumber', Value: Number(phone) },
        ],
      };
    }
    deliver(scenario.delivery, body.CallBackURL, { Body: { stkCallback } });
    return {
      MerchantRequestID: merchantRequestId,
      CheckoutRequestID: checkoutRequestId,
      ResponseCode: '0',
      ResponseDescription: 'Success. Request accepted for processing',
      CustomerMessage: 'Success. Request accepted for processing',
    };
  }

  function stkQuery(body: Record<string, unknown>) {
    checkPassword(body);
    const record = stk.get(String(body.CheckoutRequestID));
    if (!record) throw badField('CheckoutRequestID');
    if (record.resultCode === undefined)
      throw new DarajaError(500, '500.001.1001', 'The transaction is being processed');
    return {
      ResponseCode: '0',
      ResponseDescription: 'The service request has been accepted successsfully',
      MerchantRequestID: record.merchantRequestId,
      CheckoutRequestID: record.checkoutRequestId,
      ResultCode: String(record.resultCode),
      ResultDesc: STK_TEXTS[record.resultCode]!,
    };
  }

  function registerUrl(body: Record<string, unknown>) {
    for (const field of ['ShortCode', 'ResponseType', 'ConfirmationURL', 'ValidationURL'])
      if (typeof body[field] !== 'string' || body[field] === '') throw badField(field);
    // Daraja refuses URLs with these words (contract section 26).
    for (const field of ['ConfirmationURL', 'ValidationURL']) {
      if (/mpesa|safaricom|exe|cmd|sql|query/i.test(String(body[field]))) throw badField(field);
    }
    c2bUrls.set(String(body.ShortCode), {
      confirmation: String(body.ConfirmationURL),
      validation: String(body.ValidationURL),
    });
    return { OriginatorCoversationID: id(''), ResponseCode: '0', ResponseDescription: 'Success' };
  }

  function c2bSimulate(body: Record<string, unknown>) {
    const shortcode = String(body.ShortCode ?? '');
    const urls = c2bUrls.get(shortcode);
    if (!urls) throw badField('ShortCode');
    const amount = wholeAmount(body.Amount);
    const phone = String(body.Msisdn ?? '');
    if (!PHONE.test(phone)) throw badField('Msisdn');
    const transId = receipt();
    payments.set(transId, { kind: 'C2B', receipt: transId, amount, party: phone, completedAt: now() });
    deliver(scenarioForPhone(phone).delivery, urls.confirmation, {
      TransactionType: 'Pay Bill',
      TransID: transId,
      TransTime: eatTimestamp(now()),
      TransAmount: `${amount}.00`,
      BusinessShortCode: shortcode,
      BillRefNumber: String(body.BillRefNumber ?? ''),
      InvoiceNumber: '',
      OrgAccountBalance: '',
      ThirdPartyTransID: '',
      MSISDN: `${phone.slice(0, 4)} ***** ${phone.slice(-3)}`,
      FirstName: 'JOHN',
      MiddleName: '',
      LastName: '',
    });
    return {
      OriginatorCoversationID: id(''),
      ResponseCode: '0',
      ResponseDescription: 'Accept the service request successfully.',
    };
  }

  function initiator(body: Record<string, unknown>, nameField: string) {
    if (typeof body.SecurityCredential !== 'string' || body.SecurityCredential === '')
      throw badField('SecurityCredential');
    return body[nameField] === o.initiatorName;
  }

  function b2c(body: Record<string, unknown>) {
    const originator = body.OriginatorConversationID;
    if (typeof originator !== 'string' || originator === '') throw badField('OriginatorConversationID');
    const initiatorOk = initiator(body, 'InitiatorName');
    if (
      body.CommandID !== 'BusinessPayment' &&
      body.CommandID !== 'SalaryPayment' &&
      body.CommandID !== 'PromotionPayment'
    )
      throw badField('CommandID');
    const amount = wholeAmount(body.Amount);
    const phone = String(body.PartyB ?? '');
    if (!PHONE.test(phone)) throw badField('PartyB');
    for (const field of ['ResultURL', 'QueueTimeOutURL'])
      if (typeof body[field] !== 'string' || !/^https?:\/\//.test(String(body[field]))) throw badField(field);
    // v3 refuses a reused OriginatorConversationID: what makes a resend safe.
    if (b2cIds.has(originator)) throw new DarajaError(500, '500.002.1001', 'Duplicate OriginatorConversationID.');
    b2cIds.add(originator);
    const conversationId = `AG_${eatTimestamp(now()).slice(0, 8)}_${randomBytes(10).toString('hex')}`;
    const scenario = pick('b2c', phone, amount, originator);
    const base = {
      ResultType: 0,
      OriginatorConversationID: originator,
      ConversationID: conversationId,
    };
    const reference = {
      ReferenceItem: {
        Key: 'QueueTimeoutURL',
        Value: 'https://internalsandbox.safaricom.co.ke/mpesa/b2cresults/v1/submit',
      },
    };
    const fail = (code: number, text: string) =>
      deliver(scenario.delivery, String(body.ResultURL), {
        Result: { ...base, ResultCode: code, ResultDesc: text, TransactionID: 'TCE0000000', ReferenceData: reference },
      });
    if (!initiatorOk) fail(2001, 'The initiator information is invalid.');
    else if (scenario.outcome === 'timeout')
      deliver(scenario.delivery, String(body.QueueTimeOutURL), {
        Result: {
          ResultType: 1,
          ResultCode: 1,
          ResultDesc: 'The service request timed out.',
          ...{ OriginatorConversationID: originator, ConversationID: conversationId },
        },
      });
    else if (scenario.outcome === 'insufficient' || amount > sandbox.floatBalance)
      fail(1, 'The balance is insufficient for the transaction.');
    else if (scenario.outcome === 'not-mpesa' || scenario.outcome === 'wrong-pin' || scenario.outcome === 'cancelled')
      fail(2040, "Credit Party customer type (Unregistered or Registered Customer) can't be supported by the service.");
    else {
      sandbox.floatBalance -= amount;
      const r = receipt();
      const record: PaymentRecord = {
        kind: 'B2C',
        receipt: r,
        amount,
        party: phone,
        originatorConversationId: originator,
        conversationId,
        completedAt: now(),
      };
      payments.set(r, record);
      byOriginator.set(originator, record);
      byOriginator.set(conversationId, record);
      deliver(scenario.delivery, String(body.ResultURL), {
        Result: {
          ...base,
          ResultCode: 0,
          ResultDesc: 'The service request is processed successfully.',
          TransactionID: r,
          ResultParameters: {
            ResultParameter: [
              { Key: 'TransactionAmount', Value: amount },
              { Key: 'TransactionReceipt', Value: r },
              { Key: 'ReceiverPartyPublicName', Value: `${phone} - John Doe` },
              { Key: 'TransactionCompletedDateTime', Value: completedText(now()) },
              { Key: 'B2CUtilityAccountAvailableFunds', Value: sandbox.floatBalance },
              { Key: 'B2CWorkingAccountAvailableFunds', Value: 0 },
              { Key: 'B2CRecipientIsRegisteredCustomer', Value: 'Y' },
              { Key: 'B2CChargesPaidAccountAvailableFunds', Value: 0 },
            ],
          },
          ReferenceData: reference,
        },
      });
    }
    return {
      ConversationID: conversationId,
      OriginatorConversationID: originator,
      ResponseCode: '0',
      ResponseDescription: 'Accept the service request successfully.',
    };
  }

  function transactionStatus(body: Record<string, unknown>) {
    const initiatorOk = initiator(body, 'Initiator');
    if (body.CommandID !== 'TransactionStatusQuery') throw badField('CommandID');
    for (const field of ['ResultURL', 'QueueTimeOutURL'])
      if (typeof body[field] !== 'string' || !/^https?:\/\//.test(String(body[field]))) throw badField(field);
    const txId = typeof body.TransactionID === 'string' ? body.TransactionID : undefined;
    const original = typeof body.OriginalConversationID === 'string' ? body.OriginalConversationID : undefined;
    if (!txId && !original) throw badField('TransactionID');
    const originatorConversationId = `${randomBytes(2).toString('hex')}-${randomBytes(2).toString('hex')}-${randomBytes(10).toString('hex')}`;
    const conversationId = `AG_${eatTimestamp(now()).slice(0, 8)}_${randomBytes(10).toString('hex')}`;
    const found = txId ? payments.get(txId) : byOriginator.get(original!);
    const head = { ConversationID: conversationId, OriginatorConversationID: originatorConversationId };
    let result: Record<string, unknown>;
    if (!initiatorOk)
      result = { ...head, ResultType: 0, ResultCode: 2001, ResultDesc: 'The initiator information is invalid.' };
    else if (!found)
      result = { ...head, ResultType: 0, ResultCode: 1, ResultDesc: 'The transaction could not be found.' };
    else {
      const isB2c = found.kind === 'B2C';
      result = {
        ...head,
        ReferenceData: { ReferenceItem: { Key: 'Occasion', Value: String(body.Occasion ?? '') } },
        ResultCode: 0,
        ResultDesc: 'The service request is processed successfully.',
        ResultParameters: {
          ResultParameter: [
            { Key: 'DebitPartyName', Value: isB2c ? `${o.shortcode} - Sandbox Ltd` : '' },
            { Key: 'CreditPartyName', Value: isB2c ? `${found.party} - John Doe` : `${o.shortcode} - Sandbox Ltd` },
            { Key: 'OriginatorConversationID', Value: found.originatorConversationId ?? '' },
            { Key: 'InitiatedTime', Value: Number(eatTimestamp(found.completedAt)) },
            { Key: 'DebitAccountType', Value: isB2c ? 'Utility Account' : 'Customer' },
            { Key: 'DebitPartyCharges', Value: '' },
            { Key: 'TransactionReason' },
            { Key: 'ReasonType', Value: isB2c ? 'Business Payment to Customer via API' : 'Pay Bill Online' },
            { Key: 'TransactionStatus', Value: 'Completed' },
            { Key: 'FinalisedTime', Value: Number(eatTimestamp(found.completedAt)) },
            { Key: 'Amount', Value: found.amount },
            { Key: 'ConversationID', Value: found.conversationId ?? '' },
            { Key: 'ReceiptNo', Value: found.receipt },
          ],
        },
        ResultType: 0,
        TransactionID: 'TCE0000000',
      };
    }
    // The status's own callback comes on time (chaos does not touch it: a lost status is a
    // timeout the service must survive; tests ask for it with `next`).
    const scenario = next.length > 0 ? next.shift()! : {};
    deliver(scenario.delivery ?? 'on-time', String(body.ResultURL), { Result: result });
    return { ...head, ResponseCode: '0', ResponseDescription: 'Accept the service request successfully.' };
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    try {
      if (req.method === 'GET' && url.pathname === '/oauth/v1/generate') return reply(200, oauth(req, url));
      if (req.method === 'GET' && url.pathname === '/sandbox/state')
        return reply(200, { floatBalance: sandbox.floatBalance, pending: sandbox.pending(), sent: sent.length });
      if (req.method !== 'POST') throw new DarajaError(404, '404.001.01', 'Resource not found');
      const raw = await readBody(req);
      if (url.pathname === '/sandbox/next') {
        // Control: the scenarios of the next requests, in order (not a Daraja route).
        const parsed = JSON.parse(raw || '{}') as { scenarios?: Scenario[]; floatBalance?: number };
        next.push(...(parsed.scenarios ?? []));
        if (typeof parsed.floatBalance === 'number') sandbox.floatBalance = parsed.floatBalance;
        return reply(200, { queued: next.length, floatBalance: sandbox.floatBalance });
      }
      const routes: Record<string, (b: Record<string, unknown>) => unknown> = {
        '/mpesa/stkpush/v1/processrequest': stkPush,
        '/mpesa/stkpushquery/v1/query': stkQuery,
        '/mpesa/c2b/v1/registerurl': registerUrl,
        '/mpesa/c2b/v2/registerurl': registerUrl,
        '/mpesa/c2b/v1/simulate': c2bSimulate,
        '/mpesa/c2b/v2/simulate': c2bSimulate,
        '/mpesa/b2c/v3/paymentrequest': b2c,
        '/mpesa/transactionstatus/v1/query': transactionStatus,
      };
      const route = routes[url.pathname];
      if (!route) throw new DarajaError(404, '404.001.01', 'Resource not found');
      authorize(req);
      let body: Record<string, unknown> = {};
      const json = /application\/json/i.test(req.headers['content-type'] ?? '');
      try {
        body = json ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        body = {};
      }
      if (!json || typeof body !== 'object' || body === null) {
        // Daraja names the first field it could not read.
        throw badField(Object.keys(FIRST_FIELD).includes(url.pathname) ? FIRST_FIELD[url.pathname]! : 'Request');
      }
      log(`${url.pathname}`);
      const answer = route(body);
      if (opts.answerDelayMs && url.pathname.includes('/b2c/'))
        await new Promise((r) => setTimeout(r, opts.answerDelayMs));
      return reply(200, answer);
    } catch (err) {
      if (err instanceof DarajaError)
        return reply(err.status, { requestId: id(''), errorCode: err.errorCode, errorMessage: err.errorMessage });
      return reply(500, { requestId: id(''), errorCode: '500.003.1001', errorMessage: 'Internal Server Error' });
    }
  }

  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const sandbox: Sandbox = {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}`,
    port,
    sent,
    payments,
    next,
    options: o,
    floatBalance: opts.floatBalance ?? 10_000_000,
    pending: () => timers.size + heldBack.length + inFlight,
    async idle(timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      while (timers.size + inFlight > 0) {
        if (Date.now() > until) throw new Error('sandbox: callbacks still pending');
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    flush() {
      for (const h of heldBack.splice(0)) h();
    },
    expireTokens() {
      tokens.clear();
    },
    setChaos(chaos) {
      opts.chaos = chaos;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      heldBack.length = 0;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
    },
  };
  return sandbox;
}

const STK_TEXTS: Record<number, string> = {
  0: 'The service request is processed successfully.',
  1: 'The balance is insufficient for the transaction.',
  1032: 'Request cancelled by user',
  1037: 'DS timeout user cannot be reached',
  2001: 'The initiator information is invalid.',
};

const FIRST_FIELD: Record<string, string> = {
  '/mpesa/stkpush/v1/processrequest': 'BusinessShortCode',
  '/mpesa/stkpushquery/v1/query': 'BusinessShortCode',
  '/mpesa/b2c/v3/paymentrequest': 'OriginatorConversationID',
  '/mpesa/transactionstatus/v1/query': 'Initiator',
  '/mpesa/c2b/v2/registerurl': 'ShortCode',
  '/mpesa/c2b/v1/registerurl': 'ShortCode',
};

function completedText(ms: number): string {
  const t = eatTimestamp(ms);
  return `${t.slice(6, 8)}.${t.slice(4, 6)}.${t.slice(0, 4)} ${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12, 14)}`;
}

/** The path of a callback URL without its token, for logs. */
function redact(url: string): string {
  return url.replace(/\/[A-Za-z0-9_-]{16,}(\/|$)/, '/[token]$1');
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1_000_000) throw new DarajaError(400, '400.002.02', 'Bad Request - Invalid Request');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A stable digest of a callback body, for tests that count distinct callbacks. */
export function digest(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 16);
}

// `npm run mpesa:sandbox`: listens on MPESA_SANDBOX_PORT (default 8089) with the credentials in
// MPESA_CONSUMER_KEY/SECRET, MPESA_SHORTCODE and MPESA_PASSKEY (the public sandbox's by default).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const env = process.env;
  const sandbox = await startSandbox({
    port: Number(env.MPESA_SANDBOX_PORT ?? 8089),
    host: env.MPESA_SANDBOX_HOST ?? '127.0.0.1',
    consumerKey: env.MPESA_CONSUMER_KEY,
    consumerSecret: env.MPESA_CONSUMER_SECRET,
    shortcode: env.MPESA_SHORTCODE,
    passkey: env.MPESA_PASSKEY,
    initiatorName: env.MPESA_INITIATOR_NAME,
    log: (line) => console.log(`[mpesa-sandbox] ${line}`),
  });
  console.log(
    `Daraja stand-in on ${sandbox.url} (key ${sandbox.options.consumerKey}, shortcode ${sandbox.options.shortcode}); set MPESA_BASE_URL=${sandbox.url}`,
  );
  const stop = () => void sandbox.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
