// The session: the access token in memory, the refresh token in sessionStorage (this tab only; never
// localStorage) unless an app chooses otherwise (`keepIn`), one refresh at a time.
import { toApiError } from './errors.js';
import type { User } from './types.js';

// The name is the console's from before the apps shared this file: a tab's session survives the update.
const CONSOLE_KEY = 'console.refreshToken';

type Listener = () => void;

class Session {
  accessToken: string | undefined;
  user: User | undefined;
  private listeners = new Set<Listener>();
  private refreshing: Promise<boolean> | undefined;
  private store: { storage: () => Storage; key: string } = { storage: () => sessionStorage, key: CONSOLE_KEY };

  /**
   * Where this app keeps its refresh token. The console keeps the default (this tab's sessionStorage);
   * an installed app whose window the phone closes at will (the driver's) keeps it in localStorage,
   * under a key of its own. Call it before anything reads the session.
   */
  keepIn(storage: () => Storage, key: string) {
    this.store = { storage, key };
  }

  get refreshToken(): string | undefined {
    return this.store.storage().getItem(this.store.key) ?? undefined;
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
    this.store.storage().setItem(this.store.key, tokens.refreshToken);
    this.emit();
  }

  setUser(user: User) {
    this.user = user;
    this.emit();
  }

  clear() {
    this.accessToken = undefined;
    this.user = undefined;
    this.store.storage().removeItem(this.store.key);
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
