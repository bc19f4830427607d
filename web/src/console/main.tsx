// The console's entry (web/index.html): the query cache's defaults and the app.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError } from '../shared/api/errors';
import { App } from './App';
import '../shared/styles.css';

// Within the per-IP limits in normal use: data stays fresh for a while, live changes come from the
// streams, a window regaining focus does not refetch, and a 4xx is never retried.
const client = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 60_000,
      refetchOnWindowFocus: false,
      retry: (count, err) => count < 1 && !(err instanceof ApiError && err.status < 500),
    },
    mutations: { retry: false },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <App />
    </QueryClientProvider>
  </StrictMode>,
);
