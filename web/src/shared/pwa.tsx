// The start of every web app: the query cache and the rendering (the console's too); for an installed
// app (the driver's at /driver/, the customer's at /app/) also the session kept on the phone and the
// service worker of the app's scope.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode, type ComponentType } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError } from './api/errors';
import { session } from './api/session';

/**
 * The query cache's defaults, within the per-IP limits in normal use: data stays fresh for `staleTime`,
 * live changes come from the streams, a window regaining focus does not refetch, and a 4xx is never
 * retried.
 */
export function newQueryClient(staleTime: number): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime,
        refetchOnWindowFocus: false,
        retry: (count, err) => count < 1 && !(err instanceof ApiError && err.status < 500),
      },
      mutations: { retry: false },
    },
  });
}

/** Renders the app with its query cache. */
export function render(App: ComponentType, client: QueryClient) {
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <QueryClientProvider client={client}>
        <App />
      </QueryClientProvider>
    </StrictMode>,
  );
}

/**
 * `scope` is the app's path ('/driver/'); its worker is `${scope}sw.js` (built by Workbox). An
 * installed app's window is closed and reopened all day: the refresh token stays on the phone
 * (localStorage, under `storageKey`) instead of dying with the tab.
 */
export function startApp({ scope, storageKey, App }: { scope: string; storageKey: string; App: ComponentType }) {
  session.keepIn(() => localStorage, storageKey);

  const client = newQueryClient(30_000);

  // The app shell works offline once this worker is installed.
  if ('serviceWorker' in navigator && import.meta.env.PROD) {
    window.addEventListener('load', () => {
      navigator.serviceWorker.register(`${scope}sw.js`, { scope }).catch(() => undefined);
    });
  }

  render(App, client);
}
