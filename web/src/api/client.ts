// The typed API client (openapi-fetch over the generated schema) with the session: the access token
// in memory, the refresh token in sessionStorage (this tab only; never localStorage), one refresh
// on a 401, and every API error turned into an ApiError carrying the server's message.
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

export type Schemas = paths;
type Me = paths['/api/auth/me']['get']['responses'][200]['content']['application/json'];
export type User = Me;
export type Role = User['role'];

const REFRESH_KEY = 'console.refreshToken';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** "in 3 minutes" for a Retry-After of 170 s. */
export function inWords(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 60) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = Math.ceil(minutes / 60);
  return `${hours} hour${hours === 1 ? '' : 's'}`;
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 429 && err.retryAfterSeconds !== undefined) {
      const words = inWords(err.retryAfterSeconds);
      const inSeconds = `${err.retryAfterSeconds} seconds`;
      return err.message.includes(inSeconds) ? err.message.replace(inSeconds, words) : `${err.message.replace(/\.?$/, '.')} Try again in ${words}.`;
    }
    return err.message;
  }
  if (err instanceof TypeError) return 'The server could not be reached. Check your connection and try again.';
  return err instanceof Error ? err.message : String(err);
}

async function toApiError(response: Response, parsed?: unknown): Promise<ApiError> {
  let body: { message?: unknown; code?: unknown } = {};
  if (parsed && typeof parsed === 'object') body = parsed as typeof body;
  else {
    try {
      body = await response.clone().json();
    } catch {
      // not JSON (or already read): the status text says enough
    }
  }
  const retryAfter = Number(response.headers.get('retry-after'));
  return new ApiError(
    response.status,
    typeof body.message === 'string' ? body.message : `${response.status} ${response.statusText}`,
    typeof body.code === 'string' ? body.code : undefined,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  );
}

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

async function authFetch(input: Request): Promise<Response> {
  const retry = input.clone();
  const send = (request: Request) => {
    if (session.accessToken) request.headers.set('authorization', `Bearer ${session.accessToken}`);
    return fetch(request);
  };
  const response = await send(input);
  if (response.status === 401 && session.refreshToken && !input.url.includes('/api/auth/')) {
    if (await session.refresh()) return send(retry);
  }
  return response;
}

export const api = createClient<paths>({ baseUrl: '', fetch: authFetch });

/** The data of an openapi-fetch result, or an ApiError with the server's message. */
export async function ok<T>(result: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await result;
  // openapi-fetch has read the body of an error already: its `error` is that body, parsed.
  if (error !== undefined || !response.ok) throw await toApiError(response, error);
  return data as T;
}

/** For routes of the contract that the generated schema does not have yet (section 14's tracking). */
export async function getJson<T>(url: string, auth = true): Promise<T> {
  const response = await (auth ? authFetch(new Request(url)) : fetch(url));
  if (!response.ok) throw await toApiError(response);
  return (await response.json()) as T;
}

/**
 * Revokes the session on the server, then forgets it here: the sign-in page shows once the session
 * is over, not while the logout is still on its way (a tab closed at once would have kept it alive).
 * A failed or unanswered logout (5 s) still signs the tab out.
 */
export async function signOut(): Promise<void> {
  const refreshToken = session.refreshToken;
  // At most 5 s: a server that does not answer must not keep the tab signed in.
  if (refreshToken) await api.POST('/api/auth/logout', { body: { refreshToken }, signal: AbortSignal.timeout(5000) }).catch(() => undefined);
  session.clear();
}
