// The driver app's small pieces: the page heading, distances, durations and map links.

/** The screen's h1 (the document's title ends in "· Driver": main.tsx names the app). */
export { PageTitle as Title } from '../shared/ui';

export function formatDistance(meters: number): string {
  return meters < 1000 ? `${Math.round(meters)} m` : `${(meters / 1000).toFixed(1)} km`;
}

export function formatDuration(seconds: number): string {
  return seconds < 60 ? 'under a minute' : `${Math.round(seconds / 60)} min`;
}

export function formatPoint(p: { lat: number; lng: number }): string {
  return `${p.lat.toFixed(4)}, ${p.lng.toFixed(4)}`;
}

const isApple = () => /iPhone|iPad|iPod|Macintosh/.test(navigator.userAgent) && 'ontouchend' in document;

/**
 * The phone's maps at a point: a `geo:` URI (Android opens the maps app the driver chose), Apple
 * Maps on iOS (which has no `geo:`), and a web map link that works everywhere.
 */
export function mapLinks(p: { lat: number; lng: number }) {
  const at = `${p.lat},${p.lng}`;
  return {
    navigate: isApple() ? `https://maps.apple.com/?daddr=${at}` : `geo:${at}?q=${at}`,
    web: `https://www.google.com/maps/dir/?api=1&destination=${at}`,
  };
}
