export interface MapPoint {
  id: string;
  lat: number;
  lng: number;
  label: string;
  kind: 'pickup' | 'dropoff' | 'driver' | 'driver-offline';
}

export interface MapProps {
  points: MapPoint[];
  /** Click to pick a position (the new-delivery form). */
  onPick?: (lat: number, lng: number) => void;
  /** The visible area, once drawn and after every move or zoom (the admin's live map streams only it). */
  onView?: (bounds: { west: number; south: number; east: number; north: number }) => void;
  /** Cluster markers (the live maps, thousands of drivers). */
  cluster?: boolean;
  label: string;
  fit?: boolean;
  /** A new value fits the map to the points again (after it has fitted once): a place chosen by search. */
  fitKey?: string | number;
  center?: [number, number];
}
