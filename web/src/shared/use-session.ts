// The session in React: the signed-in user, and the session of this tab restored after a reload.
import { useEffect, useState, useSyncExternalStore } from 'react';
import { api, ok } from './api/client';
import { session } from './api/session';
import type { User } from './api/types';

/** The signed-in user, undefined when signed out; re-renders on sign-in and sign-out. */
export function useUser(): User | undefined {
  return useSyncExternalStore(session.subscribe, () => session.user);
}

/** Restores the session of this tab (the refresh token survives a reload, the access token does not). */
export function useRestoredSession() {
  const [state, setState] = useState<'pending' | 'done'>(session.refreshToken && !session.user ? 'pending' : 'done');
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (state !== 'pending') return;
    session
      .refresh()
      .then(async (alive) => {
        if (alive) session.setUser(await ok(api.GET('/api/auth/me')));
      })
      .catch(setError)
      .finally(() => setState('done'));
  }, [state]);
  return { restoring: state === 'pending', error };
}
