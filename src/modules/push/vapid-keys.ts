// VAPID keys for development on the embedded default: generated once with node:crypto (web-push is
// not loaded at start) and kept in DATA_DIR/vapid-keys.json (mode 0600), so that the browsers'
// subscriptions, bound to the public key, survive restarts.
import { createECDH } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config.js';

export interface VapidKeyPair {
  publicKey: string;
  privateKey: string;
}

export function generateVapidKeys(): VapidKeyPair {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  // getPrivateKey() drops leading zero bytes: a key is always 32 bytes.
  const privateKey = Buffer.alloc(32);
  const raw = ecdh.getPrivateKey();
  raw.copy(privateKey, 32 - raw.length);
  return { publicKey: ecdh.getPublicKey().toString('base64url'), privateKey: privateKey.toString('base64url') };
}

function valid(keys: Partial<VapidKeyPair> | undefined): keys is VapidKeyPair {
  if (typeof keys?.publicKey !== 'string' || typeof keys.privateKey !== 'string') return false;
  try {
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(Buffer.from(keys.privateKey, 'base64url'));
    return ecdh.getPublicKey().toString('base64url') === keys.publicKey;
  } catch {
    return false;
  }
}

async function developmentVapidKeys(dataDir: string): Promise<VapidKeyPair> {
  const file = path.join(dataDir, 'vapid-keys.json');
  try {
    const existing = JSON.parse(await readFile(file, 'utf8')) as Partial<VapidKeyPair>;
    if (valid(existing)) return { publicKey: existing.publicKey, privateKey: existing.privateKey };
  } catch {
    // not there yet (or unreadable: replaced)
  }
  const keys = generateVapidKeys();
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${JSON.stringify(keys, null, 2)}\n`, { mode: 0o600 });
  return keys;
}

/** Push is on with keys from the environment, or on the embedded default with keys kept in DATA_DIR; off otherwise. */
export async function pushVapidKeys(config: Config): Promise<Config['push']['vapid']> {
  return (
    config.push.vapid ??
    (config.database.url
      ? undefined
      : { ...(await developmentVapidKeys(config.server.dataDir)), subject: config.push.subject })
  );
}
