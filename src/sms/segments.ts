// How many SMS segments a text takes, counted before sending (contract 27): GSM-7 when every
// character is in the GSM 03.38 default alphabet or its extension table (Unicode's GSM0338 mapping),
// UCS-2 otherwise. A GSM-7 segment holds 160 septets alone or 153 in a concatenated message, an
// extension character taking two; a UCS-2 segment holds 70 UTF-16 code units alone or 67 when
// concatenated, and a character outside the Basic Multilingual Plane is never split across two.

/** The default alphabet, 0x00–0x7F (0x1B, the escape to the extension table, left out). */
const BASIC =
  '@£$¥èéùìòç\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ' +
  'ÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';

/** The extension table: each costs the escape and its own septet. */
const EXTENSION = '\f^{}\\[~]|€';

const basic = new Set(BASIC);
const extension = new Set(EXTENSION);

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SmsSegments {
  encoding: SmsEncoding;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2). */
  units: number;
  segments: number;
}

/** The characters of `text` that GSM-7 lacks (each once, in order of appearance). */
export function nonGsmCharacters(text: string): string[] {
  const out: string[] = [];
  for (const ch of text) if (!basic.has(ch) && !extension.has(ch) && !out.includes(ch)) out.push(ch);
  return out;
}

export function countSegments(text: string): SmsSegments {
  let septets = 0;
  let gsm = true;
  for (const ch of text) {
    if (basic.has(ch)) septets += 1;
    else if (extension.has(ch)) septets += 2;
    else {
      gsm = false;
      break;
    }
  }
  if (gsm) return { encoding: 'GSM-7', units: septets, segments: gsmSegments(text, septets) };
  return ucs2(text);
}

function gsmSegments(text: string, septets: number): number {
  if (septets === 0) return 1;
  if (septets <= 160) return 1;
  // An escape pair is never split across two segments: fill each 153-septet segment greedily.
  let segments = 1;
  let used = 0;
  for (const ch of text) {
    const cost = extension.has(ch) ? 2 : 1;
    if (used + cost > 153) {
      segments += 1;
      used = 0;
    }
    used += cost;
  }
  return segments;
}

function ucs2(text: string): SmsSegments {
  const units = text.length;
  if (units <= 70) return { encoding: 'UCS-2', units, segments: 1 };
  let segments = 1;
  let used = 0;
  for (const ch of text) {
    const cost = ch.length; // 2 for a surrogate pair, kept whole
    if (used + cost > 67) {
      segments += 1;
      used = 0;
    }
    used += cost;
  }
  return { encoding: 'UCS-2', units, segments };
}
