// Online: the phone's position over the driver WebSocket (contract sections 7 and 19). The newest fix
// only: positions that arrive while the socket is down or within the minimum interval replace the one
// waiting, so a reconnect sends one position, never a backlog. Reconnects with backoff (1 s doubling
// to 60 s, with jitter, at once when the browser says it is back online), a ping every 25 s that
// drops a silent socket, and the screen kept awake where the Wake Lock API exists.
import { useEffect, useRef, useState } from 'react';
import { session } from '../shared/api/session';
import type { ServerMessage } from './types';

/** At most one position every this many milliseconds (the server takes 10 messages a second). */
export const SEND_INTERVAL_MS = 3000;
const PING_MS = 25_000;
const MAX_BACKOFF_MS = 60_000;
// The server closes with these when the session is revoked or the account leaves ACTIVE.
const CLOSE_SESSION_REVOKED = 4001;
const CLOSE_ACCOUNT_INACTIVE = 4003;

export interface LinkState {
  socket: 'off' | 'connecting' | 'open' | 'waiting' | 'ended';
  /** When the next attempt is due (socket 'waiting'). */
  retryAt?: number;
  /** The last fix's accuracy in metres. */
  accuracy?: number;
  /** When the last position went out on the socket (ms since the epoch). */
  lastSentAt?: number;
  gpsError?: string;
  wakeLock: 'on' | 'off' | 'unavailable';
}

interface LocationMessage {
  type: 'location';
  lat: number;
  lng: number;
  accuracy?: number;
  heading?: number;
  speed?: number;
  recordedAt: string;
}

function toMessage(p: GeolocationPosition): LocationMessage {
  const { latitude, longitude, accuracy, heading, speed } = p.coords;
  const message: LocationMessage = {
    type: 'location',
    lat: latitude,
    lng: longitude,
    recordedAt: new Date(p.timestamp).toISOString(),
  };
  if (Number.isFinite(accuracy)) message.accuracy = Math.min(Math.max(accuracy, 0), 100_000);
  if (heading !== null && Number.isFinite(heading) && heading >= 0 && heading <= 360) message.heading = heading;
  if (speed !== null && Number.isFinite(speed) && speed >= 0) message.speed = Math.min(speed, 150);
  return message;
}

/** Seconds until the access token expires (its `exp`), or 0 when it cannot be read. */
function tokenSecondsLeft(token: string | undefined): number {
  try {
    const payload = JSON.parse(atob(token!.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))) as { exp?: number };
    return (payload.exp ?? 0) - Date.now() / 1000;
  } catch {
    return 0;
  }
}

export function useDriverLink(
  online: boolean,
  handlers: { onMessage: (message: ServerMessage) => void; onConnected: () => void; onSessionEnded: () => void },
): LinkState {
  const [state, setState] = useState<LinkState>({ socket: 'off', wakeLock: 'off' });
  const latestHandlers = useRef(handlers);
  latestHandlers.current = handlers;

  useEffect(() => {
    if (!online) {
      setState({ socket: 'off', wakeLock: 'off' });
      return;
    }
    const update = (patch: Partial<LinkState>) => setState((s) => ({ ...s, ...patch }));
    let stopped = false;
    let ws: WebSocket | undefined;
    let attempt = 0;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    let sendTimer: ReturnType<typeof setTimeout> | undefined;
    let pingTimer: ReturnType<typeof setInterval> | undefined;
    let awaitingPong = false;
    let waiting: LocationMessage | undefined;
    let lastSent = 0;
    let lock: WakeLockSentinel | undefined;

    const flush = () => {
      sendTimer = undefined;
      if (!waiting || ws?.readyState !== WebSocket.OPEN) return;
      const wait = lastSent + SEND_INTERVAL_MS - Date.now();
      if (wait > 0) {
        sendTimer = setTimeout(flush, wait);
        return;
      }
      ws.send(JSON.stringify(waiting));
      waiting = undefined;
      lastSent = Date.now();
      update({ lastSentAt: lastSent });
    };

    const retry = (afterFailedOpen: boolean) => {
      attempt += 1;
      const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(attempt - 1, 10)) * (0.75 + Math.random() * 0.5);
      update({ socket: 'waiting', retryAt: Date.now() + delay });
      retryTimer = setTimeout(() => void connect(afterFailedOpen), delay);
    };

    const drop = (socket: WebSocket) => {
      socket.onclose = socket.onmessage = socket.onopen = null;
      socket.close();
      clearInterval(pingTimer);
      if (ws === socket) ws = undefined;
    };

    const connect = async (refreshFirst: boolean) => {
      retryTimer = undefined;
      // A refused upgrade says nothing about why: an access token that expired is the likely cause.
      if (refreshFirst || tokenSecondsLeft(session.accessToken) < 30) {
        try {
          if (!(await session.refresh())) return latestHandlers.current.onSessionEnded();
        } catch {
          // No network: the socket will fail too, and be retried.
        }
      }
      if (stopped) return;
      const url = new URL('/api/drivers/me/stream', window.location.href);
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
      url.searchParams.set('access_token', session.accessToken ?? '');
      update({ socket: 'connecting', retryAt: undefined });
      let opened = false;
      const socket = new WebSocket(url);
      ws = socket;
      socket.onopen = () => {
        opened = true;
        attempt = 0;
        update({ socket: 'open' });
        latestHandlers.current.onConnected();
        flush();
        awaitingPong = false;
        pingTimer = setInterval(() => {
          if (awaitingPong) {
            // No answer to the last ping: the connection is gone without a close.
            drop(socket);
            retry(false);
            return;
          }
          awaitingPong = true;
          socket.send(JSON.stringify({ type: 'ping' }));
        }, PING_MS);
      };
      socket.onmessage = (event) => {
        let message: ServerMessage;
        try {
          message = JSON.parse(String(event.data)) as ServerMessage;
        } catch {
          return;
        }
        if (message.type === 'pong') awaitingPong = false;
        else latestHandlers.current.onMessage(message);
      };
      socket.onclose = (event) => {
        clearInterval(pingTimer);
        if (ws === socket) ws = undefined;
        if (stopped) return;
        if (event.code === CLOSE_SESSION_REVOKED || event.code === CLOSE_ACCOUNT_INACTIVE) {
          update({ socket: 'ended' });
          latestHandlers.current.onSessionEnded();
          return;
        }
        retry(!opened);
      };
    };

    const watch = navigator.geolocation?.watchPosition(
      (position) => {
        waiting = toMessage(position);
        update({ accuracy: position.coords.accuracy, gpsError: undefined });
        if (!sendTimer) flush();
      },
      (error) =>
        update({
          gpsError:
            error.code === error.PERMISSION_DENIED
              ? 'Location is not allowed for this app: allow it in the browser’s site settings.'
              : 'Waiting for a GPS fix…',
        }),
      { enableHighAccuracy: true, maximumAge: 5000, timeout: 30_000 },
    );
    if (watch === undefined) update({ gpsError: 'This browser cannot give the phone’s position.' });

    const acquireWakeLock = async () => {
      if (!('wakeLock' in navigator)) return update({ wakeLock: 'unavailable' });
      try {
        lock = await navigator.wakeLock.request('screen');
        if (stopped) return void lock.release();
        update({ wakeLock: 'on' });
        lock.addEventListener('release', () => update({ wakeLock: 'off' }));
      } catch {
        update({ wakeLock: 'off' });
      }
    };
    const onVisible = () => {
      if (document.visibilityState !== 'visible') return;
      void acquireWakeLock();
      // Back in front after the phone slept: try now instead of waiting for the backoff.
      if (retryTimer) {
        clearTimeout(retryTimer);
        void connect(false);
      }
    };
    const onOnline = () => {
      if (retryTimer) {
        clearTimeout(retryTimer);
        void connect(false);
      }
    };
    document.addEventListener('visibilitychange', onVisible);
    window.addEventListener('online', onOnline);
    void acquireWakeLock();
    void connect(false);

    return () => {
      stopped = true;
      clearTimeout(retryTimer);
      clearTimeout(sendTimer);
      if (ws) drop(ws);
      if (watch !== undefined) navigator.geolocation.clearWatch(watch);
      void lock?.release().catch(() => undefined);
      document.removeEventListener('visibilitychange', onVisible);
      window.removeEventListener('online', onOnline);
    };
  }, [online]);

  return state;
}
