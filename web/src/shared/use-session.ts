// The session in React: the signed-in user, and the session of this tab restored after a reload.
import { useEffect, useState, useSyncExternalStore } from 'react';
import { api, ok } from './api/client';
import { session } from './api/session';
import type { User } from './api/types';

/** The signed-in user, undefined when signed out; re-renders on sign-in and sign-out. */
export function useUser(): User | undefined {
  return useSyncExternalStore(session.subscribe, () => session.user);
}

/** Refreshes the session kept (false when it is over) and reads its user. */
async function restore(): Promise<boolean> {
  const alive = await session.refresh();
  if (alive) session.setUser(await ok(api.GET('/api/auth/me')));
  return alive;
}

/** Restores the session of this tab (the refresh token survives a reload, the access token does not). */
export function useRestoredSession() {
  const [state, setState] = useState<'pending' | 'done'>(session.refreshToken && !session.user ? 'pending' : 'done');
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (state !== 'pending') return;
    restore()
      .catch(setError)
      .finally(() => setState('done'));
  }, [state]);
  return { restoring: state === 'pending', error };
}

/**
 * An installed app's start: restores the session kept on the phone; 'offline' when the server cannot
 * be reached (the app may show what it saved). `onExpired` runs when the kept session is over.
 */
export function useStoredSession(onExpired?: () => void) {
  const [state, setState] = useState<'pending' | 'ready' | 'offline'>(
    session.refreshToken && !session.user ? 'pending' : 'ready',
  );
  useEffect(() => {
    if (state !== 'pending') return;
    restore()
      .then((alive) => {
        if (!alive) onExpired?.();
        setState('ready');
      })
      .catch(() => setState('offline'));
    // eslint-disable-next-line react-hooks/exhaustive-deps -- onExpired is read when the restore ends; a new callback does not restore again
  }, [state]);
  return { state, retry: () => setState('pending') };
}
