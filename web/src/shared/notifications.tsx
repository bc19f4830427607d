// Push notifications in the phone apps (contract sections 19 and 20): the "Notifications" switch asks
// the browser's permission, subscribes the app's service worker (the driver app's at /driver/, the
// customer app's at /app/) with the server's VAPID public key and saves the subscription
// (POST /api/push/subscriptions); off (and on sign-out) deletes it. Both workers import
// web/public/driver/push-sw.js, which shows the notifications and opens the app at the offer or job.
// iOS allows push only to an app on the Home Screen.
import { useEffect, useState } from 'react';
import { api, ok } from './api/client';
import { ErrorBox } from './ui';

const supported = () => 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;

async function registration(scope: string): Promise<ServiceWorkerRegistration | undefined> {
  return navigator.serviceWorker.getRegistration(scope);
}

function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const text = atob(base64url.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(new ArrayBuffer(text.length));
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

async function subscribe(scope: string): Promise<void> {
  if ((await Notification.requestPermission()) !== 'granted')
    throw new Error('Notifications are blocked for this app in the browser settings.');
  const reg = (await registration(scope)) ?? (await navigator.serviceWorker.ready);
  const { publicKey } = await ok(api.GET('/api/push/vapid-public-key'));
  const existing = await reg.pushManager.getSubscription();
  // A subscription made with another key (the server's keys changed) cannot be used: replaced.
  if (existing) await existing.unsubscribe();
  const subscription = await reg.pushManager.subscribe({
    userVisibleOnly: true,
    applicationServerKey: keyBytes(publicKey),
  });
  const json = subscription.toJSON();
  await ok(
    api.POST('/api/push/subscriptions', {
      body: {
        endpoint: subscription.endpoint,
        expirationTime: json.expirationTime ?? null,
        keys: { p256dh: json.keys?.p256dh ?? '', auth: json.keys?.auth ?? '' },
      },
    }),
  );
}

/** Removes this phone's subscription of the app at `scope` here and on the server (sign-out, the switch turned off). */
export async function unsubscribePush(scope: string): Promise<void> {
  if (!supported()) return;
  const subscription = await (await registration(scope))?.pushManager.getSubscription();
  if (!subscription) return;
  await api
    .DELETE('/api/push/subscriptions', { body: { endpoint: subscription.endpoint }, signal: AbortSignal.timeout(5000) })
    .catch(() => undefined);
  await subscription.unsubscribe().catch(() => false);
}

/**
 * The switch of the app at `scope` ('/driver/' or '/app/'), with the hint under it when on and when off.
 */
export function NotificationsSwitch({ scope, onHint, offHint }: { scope: string; onHint: string; offHint: string }) {
  const [on, setOn] = useState<boolean>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (!supported()) return;
    void registration(scope)
      .then((reg) => reg?.pushManager.getSubscription())
      .then(
        (s) => setOn(Boolean(s) && Notification.permission === 'granted'),
        () => setOn(false),
      );
  }, [scope]);
  if (!supported()) {
    return (
      <p className="muted">
        Notifications are not available in this browser. On an iPhone, add the app to the Home Screen first.
      </p>
    );
  }
  const toggle = async () => {
    setBusy(true);
    setError(undefined);
    try {
      if (on) await unsubscribePush(scope);
      else await subscribe(scope);
      setOn(!on);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="notifications">
      <button
        type="button"
        role="switch"
        aria-label="Notifications"
        aria-checked={on === true}
        className="big secondary"
        disabled={busy || on === undefined}
        onClick={() => void toggle()}
      >
        Notifications: {on ? 'on' : 'off'}
      </button>
      <p className="muted">{on ? onHint : offHint}</p>
      <ErrorBox error={error} />
    </div>
  );
}
