// Admin: the live map of the drivers in view.
import { useCallback, useEffect, useRef, useState } from 'react';
import { useLiveDrivers } from '../../shared/live-drivers';
import { Map } from '../../shared/map';
import { LiveBadge } from '../../shared/streams';
import { PageTitle } from '../../shared/ui';

const MAX_SPAN = 30;
const clamp = (v: number, min: number, max: number) => Math.min(max, Math.max(min, v));

/** The view as the stream's bbox: within the world, at most 30 degrees each way around its centre. */
export function viewBbox(b: { west: number; south: number; east: number; north: number }): string {
  const around = (lo: number, hi: number, limit: number) => {
    const mid = (lo + hi) / 2;
    const half = Math.min(hi - lo, MAX_SPAN) / 2;
    return [clamp(mid - half, -limit, limit), clamp(mid + half, -limit, limit)];
  };
  const [west, east] = around(b.west, b.east, 180);
  const [south, north] = around(b.south, b.north, 90);
  return [west, south, east, north].map((v) => v.toFixed(4)).join(',');
}

export function LiveMapPage() {
  // Only the drivers in view are streamed: a move of the map (settled for a moment) reopens the stream.
  const [bbox, setBbox] = useState<string>();
  const pending = useRef<ReturnType<typeof setTimeout>>(undefined);
  const onView = useCallback(
    (b: Parameters<typeof viewBbox>[0]) => {
      clearTimeout(pending.current);
      const next = viewBbox(b);
      pending.current = setTimeout(() => setBbox(next), bbox ? 400 : 0);
    },
    [bbox],
  );
  useEffect(() => () => clearTimeout(pending.current), []);
  const { state, points } = useLiveDrivers(bbox ? `/api/admin/drivers/live/stream?bbox=${bbox}` : undefined);
  const online = points.filter((p) => p.kind === 'driver').length;
  return (
    <>
      <div className="page-head">
        <PageTitle>Live map</PageTitle>
        <LiveBadge state={state} />
      </div>
      <p role="status">
        {points.length} {points.length === 1 ? 'driver' : 'drivers'} in view, {online} online.
      </p>
      <Map points={points} cluster fit={false} onView={onView} label="Live map of drivers" />
    </>
  );
}
