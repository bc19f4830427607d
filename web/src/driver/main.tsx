// The driver app's entry (web/driver/index.html, served at /driver/): the session kept on the phone,
// the query cache, the service worker.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError } from '../shared/api/errors';
import { session } from '../shared/api/session';
import { App } from './App';
import '../shared/styles.css';
import './driver.css';

// An installed app's window is closed and reopened all day: the refresh token stays on the phone
// (localStorage, this origin's /driver/ app only by key) instead of dying with the tab.
session.keepIn(() => localStorage, 'driver.refreshToken');

const client = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      refetchOnWindowFocus: false,
      retry: (count, err) => count < 1 && !(err instanceof ApiError && err.status < 500),
    },
    mutations: { retry: false },
  },
});

// The app shell works offline once this worker is installed (dist/web/driver/sw.js, built by Workbox).
if ('serviceWorker' in navigator && import.meta.env.PROD) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/driver/sw.js', { scope: '/driver/' }).catch(() => undefined);
  });
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
