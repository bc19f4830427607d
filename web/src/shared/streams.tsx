// Live data over Server-Sent Events (contract section 14), never polling. An EventSource cannot send
// headers, so the access token goes in `access_token` (the server never logs it). The browser's own
// reconnect would retry every few seconds forever against the per-IP limit: instead a stream that
// never opened (the route is not there, or refused us) is given up, and one that dropped after
// working reconnects with a growing delay and a fresh token. A new EventSource cannot send the
// Last-Event-ID of the old one, so a reopened stream is treated as a `resync`: the page reads its
// data again and misses no status.
import { useEffect, useState } from 'react';
import { session } from './api/session';

export type LiveState = 'connecting' | 'live' | 'unavailable';
type Handlers = Record<string, (data: unknown) => void>;

export function openStream(
  path: string,
  handlers: Handlers,
  onState: (state: LiveState) => void,
  auth = true,
): () => void {
  let source: EventSource | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let delay = 5_000;
  let stopped = false;

  const connect = async (everOpened: boolean) => {
    if (stopped) return;
    if (auth && everOpened) await session.refresh().catch(() => false);
    const url = new URL(path, location.origin);
    if (auth && session.accessToken) url.searchParams.set('access_token', session.accessToken);
    onState('connecting');
    const es = (source = new EventSource(url));
    let opened = everOpened;
    es.onopen = () => {
      if (everOpened) handlers.resync?.({ reason: 'RECONNECTED' });
      opened = true;
      delay = 5_000;
      onState('live');
    };
    for (const [name, handle] of Object.entries(handlers)) {
      es.addEventListener(name, (event) => {
        try {
          handle(JSON.parse((event as MessageEvent<string>).data));
        } catch {
          // a malformed event is skipped, the stream goes on
        }
      });
    }
    es.onerror = () => {
      es.close();
      if (!opened || stopped) {
        onState('unavailable');
        return;
      }
      onState('connecting');
      timer = setTimeout(() => void connect(true), delay);
      delay = Math.min(delay * 2, 300_000);
    };
  };
  void connect(false);
  return () => {
    stopped = true;
    clearTimeout(timer);
    source?.close();
  };
}

/** Subscribes while mounted; `path` undefined subscribes to nothing. */
export function useStream(path: string | undefined, handlers: Handlers, auth = true): LiveState {
  const [state, setState] = useState<LiveState>('connecting');
  useEffect(() => {
    if (!path) return;
    return openStream(path, handlers, setState, auth);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- handlers are read at connect time; a new path reconnects
  }, [path, auth]);
  return path ? state : 'unavailable';
}

export function LiveBadge({ state }: { state: LiveState }) {
  const text = state === 'live' ? 'Live' : state === 'connecting' ? 'Connecting…' : 'Live updates unavailable';
  return (
    <span className={`live live-${state}`} role="status">
      {text}
    </span>
  );
}
