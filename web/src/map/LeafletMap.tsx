// Leaflet, loaded only by the pages with a map (it stays out of the initial bundle). Markers are
// vector circles, not images, so they show with no network even when the tiles cannot load.
// Position updates are applied once per animation frame, whatever their rate.
import L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import 'leaflet.markercluster';
import 'leaflet.markercluster/dist/MarkerCluster.css';
import 'leaflet.markercluster/dist/MarkerCluster.Default.css';
import { useEffect, useRef } from 'react';
import type { MapPoint, MapProps } from './types';

const COLOURS: Record<MapPoint['kind'], string> = {
  pickup: '#1d6b2f',
  dropoff: '#a4161a',
  driver: '#0b4f9c',
  'driver-offline': '#6b6b6b',
};

function tileUrl(): string {
  return document.querySelector<HTMLMetaElement>('meta[name="map-tile-url"]')?.content || 'https://tile.openstreetmap.org/{z}/{x}/{y}.png';
}

function marker(p: MapPoint): L.CircleMarker {
  // The class names the kind for styles and for the browser tests.
  const m = L.circleMarker([p.lat, p.lng], { radius: p.kind.startsWith('driver') ? 7 : 9, color: '#fff', weight: 2, fillColor: COLOURS[p.kind], fillOpacity: 1, className: `marker-${p.kind}` });
  m.bindTooltip(p.label);
  return m;
}

export default function LeafletMap({ points, onPick, onView, cluster = false, label, fit = true, center }: MapProps) {
  const element = useRef<HTMLDivElement>(null);
  const map = useRef<L.Map>(undefined);
  const layer = useRef<L.LayerGroup>(undefined);
  const markers = useRef(new Map<string, { marker: L.CircleMarker; kind: MapPoint['kind'] }>());
  const pending = useRef<MapPoint[] | undefined>(undefined);
  const frame = useRef(0);
  const fitted = useRef(false);
  const pick = useRef(onPick);
  pick.current = onPick;
  const view = useRef(onView);
  view.current = onView;

  useEffect(() => {
    const m = L.map(element.current!, { center: center ?? [-1.286, 36.817], zoom: 12, attributionControl: true, zoomAnimation: false });
    L.tileLayer(tileUrl(), { maxZoom: 19, attribution: '© OpenStreetMap contributors' }).addTo(m);
    layer.current = (cluster ? L.markerClusterGroup({ chunkedLoading: true, showCoverageOnHover: false }) : L.layerGroup()).addTo(m);
    m.on('click', (e: L.LeafletMouseEvent) => pick.current?.(Number(e.latlng.lat.toFixed(6)), Number(e.latlng.lng.toFixed(6))));
    const reportView = () => {
      const b = m.getBounds();
      view.current?.({ west: b.getWest(), south: b.getSouth(), east: b.getEast(), north: b.getNorth() });
    };
    m.on('moveend', reportView);
    reportView();
    map.current = m;
    const current = markers.current;
    return () => {
      cancelAnimationFrame(frame.current);
      frame.current = 0;
      fitted.current = false;
      current.clear();
      map.current = undefined;
      layer.current = undefined;
      m.remove();
    };
    // The map is built once; points flow in through the effect below.
  }, []);

  useEffect(() => {
    pending.current = points;
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      const next = pending.current;
      const group = layer.current;
      const m = map.current;
      if (!next || !group || !m) return;
      const seen = new Set<string>();
      const added: L.Layer[] = [];
      const removed: L.Layer[] = [];
      for (const p of next) {
        seen.add(p.id);
        const held = markers.current.get(p.id);
        if (held && held.kind === p.kind) {
          const at = held.marker.getLatLng();
          if (at.lat !== p.lat || at.lng !== p.lng) {
            if (cluster) {
              // A cluster group places a marker when it is added: move it out and back in.
              removed.push(held.marker);
              added.push(held.marker);
            }
            held.marker.setLatLng([p.lat, p.lng]);
          }
          continue;
        }
        if (held) removed.push(held.marker);
        const fresh = marker(p);
        markers.current.set(p.id, { marker: fresh, kind: p.kind });
        added.push(fresh);
      }
      for (const [id, held] of markers.current) {
        if (!seen.has(id)) {
          removed.push(held.marker);
          markers.current.delete(id);
        }
      }
      if (cluster) {
        const g = group as L.MarkerClusterGroup;
        if (removed.length) g.removeLayers(removed);
        if (added.length) g.addLayers(added);
      } else {
        for (const r of removed) group.removeLayer(r);
        for (const a of added) group.addLayer(a);
      }
      if (fit && !fitted.current && next.length) {
        fitted.current = next.length > 1 || !onPick;
        const bounds = L.latLngBounds(next.map((p) => [p.lat, p.lng] as [number, number]));
        // Not animated: a page left mid-animation would have Leaflet touch a removed map.
        m.fitBounds(bounds.pad(0.3), { maxZoom: 15, animate: false });
      }
    });
  }, [points, cluster, fit, onPick]);

  return <div ref={element} className="map" role="region" aria-label={label} />;
}
