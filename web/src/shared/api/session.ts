// The session: the access token in memory, the refresh token in sessionStorage (this tab only; never
// localStorage), one refresh at a time.
import { toApiError } from './errors.js';
import type { User } from './types.js';

// The name is the console's from before the apps shared this file: a tab's session survives the update.
const REFRESH_KEY = 'console.refreshToken';

type Listener = () => void;

class Session {
  accessToken: string | undefined;
  user: User | undefined;
  private listeners = new Set<Listener>();
  private refreshing: Promise<boolean> | undefined;

  get refreshToken(): string | undefined {
    return sessionStorage.getItem(REFRESH_KEY) ?? undefined;
  }

  subscribe = (listener: Listener) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private emit() {
    for (const l of this.listeners) l();
  }

  signedIn(tokens: { accessToken: string; refreshToken: string; user: User }) {
    this.accessToken = tokens.accessToken;
    this.user = tokens.user;
    sessionStorage.setItem(REFRESH_KEY, tokens.refreshToken);
    this.emit();
  }

  setUser(user: User) {
    this.user = user;
    this.emit();
  }

  clear() {
    this.accessToken = undefined;
    this.user = undefined;
    sessionStorage.removeItem(REFRESH_KEY);
    this.emit();
  }

  /** One refresh at a time; false when the session is over (revoked or expired). */
  refresh(): Promise<boolean> {
    const token = this.refreshToken;
    if (!token) return Promise.resolve(false);
    this.refreshing ??= fetch('/api/auth/refresh', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refreshToken: token }),
    })
      .then(async (res) => {
        if (res.ok) {
          this.accessToken = ((await res.json()) as { accessToken: string }).accessToken;
          return true;
        }
        if (res.status === 401) this.clear();
        else throw await toApiError(res);
        return false;
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }
}

export const session = new Session();
