// Live statuses (contract section 14): a status event patches the cached lists and the cached
// delivery in place; only what the event does not carry is read again.
import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import { queryKeys } from '../query-keys';
import { useStream } from '../streams';
import type { Package, PackagePage, PackageStatus } from './types';

/** Section 14's status event. */
export interface StatusEvent {
  jobType: 'PACKAGE' | 'RIDE';
  jobId: string;
  status: string;
  at: string;
  reason?: string;
}

/** Applies a live status event to the cached lists and the cached package, without a request. */
export function applyStatusEvent(client: QueryClient, event: StatusEvent) {
  if (event.jobType !== 'PACKAGE') return;
  let known = false;
  client.setQueriesData<PackagePage>({ queryKey: queryKeys.packages }, (page) => {
    if (!page) return page;
    return {
      ...page,
      items: page.items.map((p) => {
        if (p.id !== event.jobId) return p;
        known = true;
        return { ...p, status: event.status as PackageStatus, updatedAt: event.at };
      }),
    };
  });
  client.setQueryData<Package>(queryKeys.package(event.jobId), (p) =>
    p && p.status !== event.status
      ? {
          ...p,
          status: event.status as PackageStatus,
          updatedAt: event.at,
          statusHistory: [
            ...p.statusHistory,
            { status: event.status as PackageStatus, at: event.at, ...(event.reason ? { reason: event.reason } : {}) },
          ],
        }
      : p,
  );
  // A package new to this page, or a driver named or gone: fetch what the event does not carry.
  const driverChanged = event.status === 'ASSIGNED' || event.status === 'PENDING';
  if (!known || driverChanged) void client.invalidateQueries({ queryKey: queryKeys.packages });
  // A delivered package may carry its proof of delivery (sent just before): read it again.
  if (driverChanged || event.status === 'DELIVERED')
    void client.invalidateQueries({ queryKey: queryKeys.package(event.jobId) });
}

export function useAccountStream() {
  const client = useQueryClient();
  return useStream('/api/events/stream', {
    status: (data) => applyStatusEvent(client, data as StatusEvent),
    // The server could not replay what was missed (or the stream was reopened): read everything again.
    resync: () =>
      void client.invalidateQueries({
        predicate: (q) => q.queryKey[0] === queryKeys.packages[0] || q.queryKey[0] === queryKeys.anyPackage[0],
      }),
  });
}
