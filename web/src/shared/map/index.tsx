import { lazy, Suspense } from 'react';
import type { MapProps } from './types';

export type { MapPoint } from './types';

const LeafletMap = lazy(() => import('./LeafletMap'));

export function Map(props: MapProps) {
  return (
    <Suspense fallback={<div className="map map-loading">Loading map…</div>}>
      <LeafletMap {...props} />
    </Suspense>
  );
}
