import { lazy, Suspense } from 'react';
import type { MapProps } from './types';

export type { MapPoint } from './types';

const LeafletMap = lazy(() => import('./LeafletMap'));

/** `loadingLabel`: the words shown while the map's code loads (a translated page gives its own). */
export function Map({ loadingLabel, ...props }: MapProps & { loadingLabel?: string }) {
  return (
    <Suspense fallback={<div className="map map-loading">{loadingLabel ?? 'Loading map…'}</div>}>
      <LeafletMap {...props} />
    </Suspense>
  );
}
