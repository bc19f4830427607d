// Signing out of the driver app, online or not (contract section 19, issue 39). A phone is often
// handed to the next driver: at once, on the phone, the push subscription is unsubscribed, the
// tokens, the queued steps and the saved job are removed, and a pending sign-out (the refresh token
// and the push endpoint, nothing else) is kept. It is sent as soon as the phone can reach the server
// (now, when the browser says it is back online, when the app starts): POST /api/auth/logout, which
// revokes the session, sets the driver OFFLINE and deletes that push subscription.
// The service worker reads whether someone is signed in (a Cache Storage entry, which it can read
// and localStorage it cannot): with nobody signed in it shows no offer.
import { session } from '../shared/api/session';
import { forgetJob } from './last-job';
import { queuedSteps } from './offline-queue';

const PENDING_KEY = 'driver.pendingSignOuts';
const SCOPE = '/driver/';
/** Read by web/public/driver/push-sw.js. */
const SIGNED_IN_CACHE = 'driver-signed-in';
const SIGNED_IN_URL = `${SCOPE}signed-in`;

interface PendingSignOut {
  refreshToken: string;
  pushEndpoint?: string;
}

function pending(): PendingSignOut[] {
  try {
    const parsed = JSON.parse(localStorage.getItem(PENDING_KEY) ?? '[]') as unknown;
    return Array.isArray(parsed) ? (parsed as PendingSignOut[]) : [];
  } catch {
    return [];
  }
}

function keep(list: PendingSignOut[]) {
  try {
    if (list.length) localStorage.setItem(PENDING_KEY, JSON.stringify(list));
    else localStorage.removeItem(PENDING_KEY);
  } catch {
    // Storage refused: the sign-out is tried while this page lives.
  }
}

/** Tells the service worker whether a driver is signed in on this phone (no offer is shown otherwise). */
export async function markSignedIn(signedIn: boolean): Promise<void> {
  if (typeof caches === 'undefined') return;
  try {
    const cache = await caches.open(SIGNED_IN_CACHE);
    if (signedIn) await cache.put(SIGNED_IN_URL, new Response('1'));
    else await cache.delete(SIGNED_IN_URL);
  } catch {
    // No Cache Storage (a private window): the worker then shows offers as before.
  }
}

/** Unsubscribes this phone's push subscription in the browser (no network needed); its endpoint. */
async function unsubscribeHere(): Promise<string | undefined> {
  if (!('serviceWorker' in navigator) || !('PushManager' in window)) return undefined;
  try {
    const reg = await navigator.serviceWorker.getRegistration(SCOPE);
    const subscription = await reg?.pushManager.getSubscription();
    if (!subscription) return undefined;
    // Offline the browser may not answer soon: the endpoint is forgotten here either way.
    await Promise.race([
      subscription.unsubscribe().catch(() => false),
      new Promise((resolve) => setTimeout(resolve, 3000)),
    ]);
    return subscription.endpoint;
  } catch {
    return undefined;
  }
}

/**
 * Sends the pending sign-outs; those the network did not carry wait for the next try. Tries may
 * overlap (one hanging as the network flips): a logout sent twice is answered 200 twice.
 */
export async function sendPendingSignOuts(): Promise<void> {
  // Offline, a request may hang rather than fail: the `online` event and the timer send them.
  if (!navigator.onLine) return;
  for (const item of pending()) {
    try {
      // Not through the session's client: the next driver's token must not go with it.
      const res = await fetch('/api/auth/logout', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(item),
        // A request made as the network flips may hang: given up after 5 s, tried again.
        signal: AbortSignal.timeout(5000),
      });
      // A 5xx or 429: later. Any other answer settles it (200 also for a token no longer live).
      if (res.status >= 500 || res.status === 429) return;
    } catch {
      return;
    }
    keep(pending().filter((p) => p.refreshToken !== item.refreshToken));
  }
}

/** Steps queued offline that a sign-out would drop. */
export const stepsLostOnSignOut = () => queuedSteps.list().length;

/** Everything of this driver off the phone at once; the server told now or once the phone is back. */
export async function signOutDriver(): Promise<void> {
  const refreshToken = session.refreshToken;
  queuedSteps.clear();
  forgetJob();
  session.clear();
  const pushEndpoint = await unsubscribeHere();
  await markSignedIn(false);
  if (refreshToken)
    keep([
      ...pending().filter((p) => p.refreshToken !== refreshToken),
      { refreshToken, ...(pushEndpoint ? { pushEndpoint } : {}) },
    ]);
  await sendPendingSignOuts();
}

// Back online: the pending sign-outs go out (the app's start sends them too); every 5 s while some
// wait, for a browser that does not tell (an `online` event is not always fired).
if (typeof window !== 'undefined') {
  window.addEventListener('online', () => void sendPendingSignOuts());
  setInterval(() => {
    if (pending().length) void sendPendingSignOuts();
  }, 5000);
}
