// The typed API clients (openapi-fetch over the generated schema): `api` with the session's bearer
// token and one refresh on a 401, `publicApi` without a session (the public tracking page is the same
// for anyone holding the link), and `ok`, which turns every API error into an ApiError.
import createClient from 'openapi-fetch';
import { toApiError } from './errors.js';
import type { paths } from './schema.js';
import { session } from './session.js';

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

/**
 * A request the typed client does not make (an image as a blob, a multipart upload), with the
 * session's bearer token and the same one refresh on a 401; an API error becomes an ApiError.
 */
export async function fetchWithSession(url: string, init?: RequestInit): Promise<Response> {
  const response = await authFetch(new Request(url, init));
  if (!response.ok) throw await toApiError(response);
  return response;
}

export const publicApi = createClient<paths>({ baseUrl: '' });

/** The data of an openapi-fetch result, or an ApiError with the server's message. */
export async function ok<T>(result: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await result;
  // openapi-fetch has read the body of an error already: its `error` is that body, parsed.
  if (error !== undefined || !response.ok) throw await toApiError(response, error);
  return data as T;
}

/**
 * Revokes the session on the server, then forgets it here: the sign-in page shows once the session
 * is over, not while the logout is still on its way (a tab closed at once would have kept it alive).
 * A failed or unanswered logout (5 s) still signs the tab out.
 */
export async function signOut(): Promise<void> {
  const refreshToken = session.refreshToken;
  // At most 5 s: a server that does not answer must not keep the tab signed in.
  if (refreshToken)
    await api
      .POST('/api/auth/logout', { body: { refreshToken }, signal: AbortSignal.timeout(5000) })
      .catch(() => undefined);
  session.clear();
}
