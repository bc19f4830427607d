// Driver sockets and positions for the dispatch tests.
import WebSocket from 'ws';
import type { TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { setDriverPosition } from './packages-helpers.js';

export type Message = Record<string, any>;

export interface Socket {
  /** The next message of one of these types (others are skipped), or a rejection after `ms`. */
  next(types: string[], ms?: number): Promise<Message>;
  /** Every message received so far. */
  seen: Message[];
  close(): void;
}

export function wsBase(t: TestApp): string {
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  return `ws://127.0.0.1:${address.port}/api/drivers/me/stream`;
}

export function openSocket(base: string, user: TestUser): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(base, { headers: user.headers });
    const seen: Message[] = [];
    let cursor = 0;
    const waiters = new Set<() => void>();
    ws.on('message', (data) => {
      seen.push(JSON.parse(data.toString()));
      for (const w of [...waiters]) w();
    });
    ws.on('error', reject);
    ws.on('open', () =>
      resolve({
        seen,
        close: () => ws.close(),
        next: (types, ms = 3000) =>
          new Promise((res, rej) => {
            const check = () => {
              while (cursor < seen.length) {
                const m = seen[cursor++]!;
                if (types.includes(m.type)) {
                  waiters.delete(check);
                  clearTimeout(timer);
                  res(m);
                  return;
                }
              }
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              rej(new Error(`no ${types.join('/')} message within ${ms} ms`));
            }, ms);
            waiters.add(check);
            check();
          }),
      }),
    );
  });
}

/** An ONLINE driver at (lat, lng), known to the live index, with its socket open. */
export async function onlineDriver(
  t: TestApp,
  base: string,
  lat: number,
  lng: number,
  vehicleType: 'BIKE' | 'CAR' = 'BIKE',
) {
  const user = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE', vehicleType } });
  await setDriverPosition(t, user.id, lat, lng);
  const socket = await openSocket(base, user);
  return { user, socket };
}
