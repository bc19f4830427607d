// Reading Daraja's callbacks (pure): items by Name or Key (their order varies, a Value may be
// missing), codes compared as strings, amounts as whole shillings. Anything that does not parse is
// undefined, and the caller refuses it: callbacks are unsigned and trusted for nothing alone.

export interface StkResult {
  merchantRequestId: string;
  checkoutRequestId: string;
  resultCode: string;
  resultDesc: string;
  /** Set on success (ResultCode 0). */
  amount?: number;
  receipt?: string;
  phone?: string;
}

export interface B2cResult {
  originatorConversationId: string;
  conversationId: string;
  resultCode: string;
  resultDesc: string;
  receipt?: string;
  amount?: number;
}

export interface StatusResult {
  /** The ids of the Transaction Status request itself (what its callback is matched by). */
  originatorConversationId: string;
  conversationId: string;
  resultCode: string;
  resultDesc: string;
  /** From ResultParameters, when ResultCode is 0. */
  transactionStatus?: string;
  receipt?: string;
  amount?: number;
  /** The transaction's own B2C OriginatorConversationID, when the result names one. */
  transactionOriginatorConversationId?: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined;

/** Whole shillings from 250, 250.0, "4500.00"; undefined for anything with a fraction or not a number. */
export function shillings(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isFinite(n) && Number.isInteger(n) && n >= 0 ? n : undefined;
}

function items(list: unknown, key: 'Name' | 'Key'): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const array = Array.isArray(list) ? list : isObject(list) ? [list] : [];
  for (const item of array) if (isObject(item) && typeof item[key] === 'string') out.set(item[key], item.Value);
  return out;
}

export function parseStkCallback(body: unknown): StkResult | undefined {
  const cb =
    isObject(body) && isObject(body.Body) && isObject(body.Body.stkCallback) ? body.Body.stkCallback : undefined;
  if (!cb) return undefined;
  const merchantRequestId = str(cb.MerchantRequestID);
  const checkoutRequestId = str(cb.CheckoutRequestID);
  const resultCode = str(cb.ResultCode);
  if (!merchantRequestId || !checkoutRequestId || resultCode === undefined) return undefined;
  const result: StkResult = { merchantRequestId, checkoutRequestId, resultCode, resultDesc: str(cb.ResultDesc) ?? '' };
  if (resultCode === '0') {
    const meta = items(isObject(cb.CallbackMetadata) ? cb.CallbackMetadata.Item : undefined, 'Name');
    result.amount = shillings(meta.get('Amount'));
    result.receipt = str(meta.get('MpesaReceiptNumber'));
    result.phone = str(meta.get('PhoneNumber'));
  }
  return result;
}

/**
 * What B2C and Transaction Status results share: the Result object, its ids, code and description
 * (undefined unless all but the description are there), and its ResultParameters by Key on success.
 */
function readResult(body: unknown) {
  const r = isObject(body) && isObject(body.Result) ? body.Result : undefined;
  if (!r) return undefined;
  const originatorConversationId = str(r.OriginatorConversationID);
  const conversationId = str(r.ConversationID);
  const resultCode = str(r.ResultCode);
  if (!originatorConversationId || !conversationId || resultCode === undefined) return undefined;
  const head = { originatorConversationId, conversationId, resultCode, resultDesc: str(r.ResultDesc) ?? '' };
  const params =
    resultCode === '0'
      ? items(isObject(r.ResultParameters) ? r.ResultParameters.ResultParameter : undefined, 'Key')
      : undefined;
  return { r, head, params };
}

export function parseB2cResult(body: unknown): B2cResult | undefined {
  const read = readResult(body);
  if (!read) return undefined;
  const { r, head, params } = read;
  const out: B2cResult = { ...head };
  if (params) {
    out.receipt = str(params.get('TransactionReceipt')) ?? str(r.TransactionID);
    out.amount = shillings(params.get('TransactionAmount'));
  }
  return out;
}

/**
 * A B2C result (a payout line's or a refund's) read against the row it answers: MISMATCH when its
 * conversation ids are not the row's, DUPLICATE when the row already ended, else the parsed result.
 */
export function matchB2cResult(
  row: { originator_conversation_id: string | null; conversation_id: string | null; state: string },
  body: unknown,
): B2cResult | 'MISMATCH' | 'DUPLICATE' {
  const result = parseB2cResult(body);
  if (!result || result.originatorConversationId !== row.originator_conversation_id) return 'MISMATCH';
  if (row.conversation_id && result.conversationId !== row.conversation_id) return 'MISMATCH';
  if (row.state === 'PAID' || row.state === 'FAILED') return 'DUPLICATE';
  return result;
}

export function parseStatusResult(body: unknown): StatusResult | undefined {
  const read = readResult(body);
  if (!read) return undefined;
  const { head, params } = read;
  const out: StatusResult = { ...head };
  if (params) {
    out.transactionStatus = str(params.get('TransactionStatus'));
    out.receipt = str(params.get('ReceiptNo'));
    out.amount = shillings(params.get('Amount'));
    out.transactionOriginatorConversationId =
      str(params.get('OriginatorConversationID')) || str(params.get('Originator Conversation ID'));
  }
  return out;
}

/** Kenyan E.164 (+2547XXXXXXXX or +2541XXXXXXXX) as Daraja writes it: 12 digits, no "+"; undefined if not Kenyan. */
export function darajaPhone(e164: string): string | undefined {
  const m = /^\+?(254[17]\d{8})$/.exec(e164.trim());
  return m ? m[1] : undefined;
}

/** The answer to every STK, B2C, timeout and status callback (callback.ack.json). */
export const CALLBACK_ACK = { ResultCode: 0, ResultDesc: 'Accepted' } as const;
