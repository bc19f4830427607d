// A local Web Push service for the tests: it hands out subscriptions whose keys (the browser's ECDH
// pair and auth secret) it holds, checks each request's VAPID JWT (RFC 8292: ES256 with the given
// public key, aud = this origin, exp within 24 h) and decrypts the aes128gcm payload (RFC 8291).
import { createDecipheriv, createECDH, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { importJWK, jwtVerify } from 'jose';

export interface ReceivedPush {
  subscriptionId: string;
  ttl: string | undefined;
  urgency: string | undefined;
  contentEncoding: string | undefined;
  /** The decrypted payload, parsed as JSON. */
  payload: Record<string, any>;
  /** performance.now() when the request arrived. */
  receivedAt: number;
  /** Date.now() then (to compare with the server's timestamps, the benchmark). */
  receivedWallMs: number;
}

export interface TestSubscription {
  id: string;
  /** The PushSubscription JSON a browser would POST. */
  json: { endpoint: string; expirationTime: null; keys: { p256dh: string; auth: string } };
}

interface Held {
  ecdh: ReturnType<typeof createECDH>;
  auth: Buffer;
  /** What this subscription's endpoint answers (201 by default). */
  status: number;
}

export interface PushReceiver {
  origin: string;
  subscription(): TestSubscription;
  /** Makes a subscription's endpoint answer this status from now on (410: gone). */
  answer(subscriptionId: string, status: number): void;
  received: ReceivedPush[];
  /** Requests refused (bad JWT, undecryptable payload), with why. */
  rejected: string[];
  /** The next push for this subscription (or any, without an id), within `ms`. */
  next(subscriptionId?: string, ms?: number): Promise<ReceivedPush>;
  /** Called with each push as it arrives (the benchmark); such pushes are not kept in `received`. */
  onPush?: (push: ReceivedPush) => void;
  /** With `anyId`: the keys every unknown /push/<uuid> endpoint decrypts with (many subscriptions, one key pair). */
  sharedKeys: { p256dh: string; auth: string };
  close(): Promise<void>;
}

export async function startPushReceiver(
  vapidPublicKey: string,
  options: { anyId?: boolean } = {},
): Promise<PushReceiver> {
  const held = new Map<string, Held>();
  const received: ReceivedPush[] = [];
  const rejected: string[] = [];
  const waiters = new Set<() => void>();
  const raw = Buffer.from(vapidPublicKey, 'base64url');
  const key = await importJWK(
    {
      kty: 'EC',
      crv: 'P-256',
      x: raw.subarray(1, 33).toString('base64url'),
      y: raw.subarray(33, 65).toString('base64url'),
    },
    'ES256',
  );
  let origin = '';
  const shared = newHeld();

  const receiver: PushReceiver = {
    origin: '',
    received,
    rejected,
    sharedKeys: { p256dh: shared.ecdh.getPublicKey().toString('base64url'), auth: shared.auth.toString('base64url') },
    subscription() {
      const id = randomUUID();
      const h = newHeld();
      held.set(id, h);
      return {
        id,
        json: {
          endpoint: `${origin}/push/${id}`,
          expirationTime: null,
          keys: { p256dh: h.ecdh.getPublicKey().toString('base64url'), auth: h.auth.toString('base64url') },
        },
      };
    },
    answer(subscriptionId, status) {
      held.get(subscriptionId)!.status = status;
    },
    next(subscriptionId, ms = 5000) {
      let cursor = 0;
      return new Promise((resolve, reject) => {
        const check = () => {
          for (; cursor < received.length; cursor++) {
            const push = received[cursor]!;
            if (subscriptionId === undefined || push.subscriptionId === subscriptionId) {
              waiters.delete(check);
              clearTimeout(timer);
              // Consumed: the next call waits for a later one.
              received.splice(cursor, 1);
              resolve(push);
              return;
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `no push${subscriptionId ? ` for ${subscriptionId}` : ''} within ${ms} ms (rejected: ${rejected.join('; ') || 'none'})`,
            ),
          );
        }, ms);
        waiters.add(check);
        check();
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const receivedAt = performance.now();
      const receivedWallMs = Date.now();
      const id = /^\/push\/([0-9a-f-]{36})$/.exec(req.url ?? '')?.[1];
      const sub = id ? (held.get(id) ?? (options.anyId ? shared : undefined)) : undefined;
      if (!id || !sub) {
        res.writeHead(404).end();
        return;
      }
      if (sub.status !== 201) {
        res.writeHead(sub.status).end();
        return;
      }
      void verify(req.headers.authorization, key, vapidPublicKey, origin)
        .then(() => {
          if (req.headers['content-encoding'] !== 'aes128gcm')
            throw new Error(`Content-Encoding ${req.headers['content-encoding']}`);
          const payload = JSON.parse(decrypt(Buffer.concat(chunks), sub).toString('utf8'));
          const push: ReceivedPush = {
            subscriptionId: id,
            ttl: req.headers.ttl as string | undefined,
            urgency: req.headers.urgency as string | undefined,
            contentEncoding: req.headers['content-encoding'],
            payload,
            receivedAt,
            receivedWallMs,
          };
          res.writeHead(201).end();
          receiver.onPush?.(push);
          if (!receiver.onPush) received.push(push);
          for (const w of [...waiters]) w();
        })
        .catch((err: Error) => {
          rejected.push(err.message);
          res.writeHead(400).end();
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.origin = origin;
  return receiver;
}

function newHeld(): Held {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { ecdh, auth: randomBytes(16), status: 201 };
}

/** `Authorization: vapid t=<JWT>, k=<public key>` (RFC 8292 section 3). */
async function verify(
  header: string | undefined,
  key: Awaited<ReturnType<typeof importJWK>>,
  publicKey: string,
  audience: string,
): Promise<void> {
  const match = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(header ?? '');
  if (!match) throw new Error(`bad Authorization header: ${header}`);
  if (match[2] !== publicKey) throw new Error('k is not the VAPID public key');
  const { payload } = await jwtVerify(match[1]!, key, { algorithms: ['ES256'], audience });
  const now = Math.floor(Date.now() / 1000);
  if (typeof payload.exp !== 'number' || payload.exp <= now || payload.exp > now + 24 * 3600)
    throw new Error(`bad exp ${payload.exp}`);
  if (typeof payload.sub !== 'string' || !/^(mailto:|https:)/.test(payload.sub))
    throw new Error(`bad sub ${payload.sub}`);
}

/** RFC 8291 section 3 and RFC 8188: one aes128gcm record. */
function decrypt(body: Buffer, sub: Held): Buffer {
  const salt = body.subarray(0, 16);
  const idlen = body[20]!;
  const senderKey = body.subarray(21, 21 + idlen);
  const ciphertext = body.subarray(21 + idlen);
  const ecdhSecret = sub.ecdh.computeSecret(senderKey);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), sub.ecdh.getPublicKey(), senderKey]);
  const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, sub.auth, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()]);
  // The last record ends with the delimiter 0x02, then zero padding.
  let end = padded.length;
  while (end > 0 && padded[end - 1] === 0) end--;
  if (padded[end - 1] !== 2) throw new Error('no last-record delimiter');
  return padded.subarray(0, end - 1);
}
