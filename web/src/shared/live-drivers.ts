// The live map streams (contract section 14: `snapshot`, then `positions` with only what changed) as
// map points: the admin's map of the drivers in view, a company's map of its drivers.
import { useMemo, useRef, useState } from 'react';
import type { MapPoint } from './map';
import { useStream } from './streams';

/** Section 14's live map entry. */
export interface LiveDriver {
  driverId: string;
  firstName: string;
  vehicleType: string;
  availability: 'ONLINE' | 'OFFLINE';
  onJob: boolean;
  location: { lat: number; lng: number } | null;
  updatedAt: string;
}

/** Updates are merged into a Map and handed to the map at most once per animation frame. */
export function useLiveDrivers(path: string | undefined) {
  const drivers = useRef(new globalThis.Map<string, LiveDriver>());
  const [version, setVersion] = useState(0);
  const scheduled = useRef(0);
  const bump = () => {
    if (scheduled.current) return;
    scheduled.current = requestAnimationFrame(() => {
      scheduled.current = 0;
      setVersion((v) => v + 1);
    });
  };
  const state = useStream(path, {
    snapshot: (data) => {
      drivers.current.clear();
      for (const d of (data as { drivers: LiveDriver[] }).drivers) drivers.current.set(d.driverId, d);
      bump();
    },
    positions: (data) => {
      const { drivers: changed, removed } = data as { drivers: LiveDriver[]; removed?: string[] };
      for (const d of changed) drivers.current.set(d.driverId, d);
      for (const id of removed ?? []) drivers.current.delete(id);
      bump();
    },
  });
  const points = useMemo<MapPoint[]>(() => {
    const out: MapPoint[] = [];
    for (const d of drivers.current.values()) {
      if (!d.location) continue;
      out.push({
        id: d.driverId,
        lat: d.location.lat,
        lng: d.location.lng,
        label: `${d.firstName} · ${d.vehicleType}${d.onJob ? ' · on a job' : ''}`,
        kind: d.availability === 'ONLINE' ? 'driver' : 'driver-offline',
      });
    }
    return out;
    // eslint-disable-next-line react-hooks/exhaustive-deps -- version is the change signal for the mutable Map
  }, [version]);
  return { state, points, count: drivers.current.size };
}
