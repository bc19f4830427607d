// Leaflet, loaded only by the pages with a map (it stays out of the initial bundle). Markers are
// vector circles, not images, so they show with no network even when the tiles cannot load.
// Position updates are applied once per animation frame, whatever their rate; on a clustered map
// (thousands of drivers) in slices of a few milliseconds per frame, so that a list where every
// marker moved never blocks the page for the whole of it (bench/b12-live-map.ts).
import L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import 'leaflet.markercluster';
import 'leaflet.markercluster/dist/MarkerCluster.css';
import 'leaflet.markercluster/dist/MarkerCluster.Default.css';
import { useEffect, useRef } from 'react';
import type { MapPoint, MapProps } from './types';
import { Pacer, PendingChanges, type Change } from './updates';

/** The time a clustered map spends on its markers in one animation frame, at most about. */
const CLUSTER_FRAME_BUDGET_MS = 6;

const COLOURS: Record<MapPoint['kind'], string> = {
  pickup: '#1d6b2f',
  dropoff: '#a4161a',
  driver: '#0b4f9c',
  'driver-offline': '#6b6b6b',
};

function tileUrl(): string {
  return (
    document.querySelector<HTMLMetaElement>('meta[name="map-tile-url"]')?.content ||
    'https://tile.openstreetmap.org/{z}/{x}/{y}.png'
  );
}

/** The count each cluster's icon shows, as drawn by clusterIcon. */
const drawnCount = new WeakMap<L.MarkerCluster, number>();
const SIZES = ['small', 'medium', 'large'] as const;
const sizeOf = (count: number) => (count < 10 ? SIZES[0] : count < 100 ? SIZES[1] : SIZES[2]);

/** markercluster's own icon (the same classes and markup), remembering the count it shows. */
function clusterIcon(cluster: L.MarkerCluster): L.DivIcon {
  const count = cluster.getChildCount();
  drawnCount.set(cluster, count);
  return new L.DivIcon({
    html: `<div><span>${count}</span></div>`,
    className: `marker-cluster marker-cluster-${sizeOf(count)}`,
    iconSize: new L.Point(40, 40),
  });
}

// After every change markercluster builds a new icon element (with its listeners and styles) for
// each cluster in view that the change went through, even when its count stayed the same: with
// 5,000 drivers moving, that was about half of the page's time on its markers (B12). Here a
// cluster on the map keeps its element: a new count is written into it, and the cluster moves to
// its new centre. (Private parts of markercluster 1.5: _updateIcon, _iconObj, _iconNeedsUpdate.)
type Cluster = L.MarkerCluster & {
  _icon?: HTMLElement;
  _iconObj?: L.DivIcon;
  _iconNeedsUpdate: boolean;
  _updateIcon(): void;
  update(): void;
};
const clusterProto = L.MarkerCluster.prototype as unknown as Cluster;
const updateIcon = clusterProto._updateIcon;
clusterProto._updateIcon = function (this: Cluster) {
  const element = this._icon;
  const drawn = drawnCount.get(this);
  if (!element || drawn === undefined) {
    updateIcon.call(this);
    return;
  }
  const count = this.getChildCount();
  if (count !== drawn) {
    // What a re-added cluster will draw, then the element in place.
    this._iconObj = clusterIcon(this);
    const span = element.querySelector('span');
    if (span) span.textContent = String(count);
    if (sizeOf(count) !== sizeOf(drawn))
      element.classList.replace(`marker-cluster-${sizeOf(drawn)}`, `marker-cluster-${sizeOf(count)}`);
  }
  this._iconNeedsUpdate = false;
  this.update();
};

interface Held {
  marker: L.CircleMarker;
  kind: MapPoint['kind'];
  label: string;
}

/**
 * A label as text. Labels carry user data (drivers' names, addresses), and Leaflet writes a string
 * content as HTML: a name that is a `<meta http-equiv="refresh">` would send the viewer elsewhere.
 */
function textElement(label: string): HTMLElement {
  const span = document.createElement('span');
  span.textContent = label;
  return span;
}

function marker(p: MapPoint): Held {
  // The class names the kind for styles and for the browser tests.
  const m = L.circleMarker([p.lat, p.lng], {
    radius: p.kind.startsWith('driver') ? 7 : 9,
    color: '#fff',
    weight: 2,
    fillColor: COLOURS[p.kind],
    fillOpacity: 1,
    className: `marker-${p.kind}`,
  });
  const held: Held = { marker: m, kind: p.kind, label: p.label };
  // Built when the tooltip opens, from the label of the moment (thousands of markers, few hovered).
  m.bindTooltip(() => textElement(held.label));
  return held;
}

export default function LeafletMap({
  points,
  onPick,
  onView,
  cluster = false,
  label,
  fit = true,
  fitKey,
  center,
}: MapProps) {
  const element = useRef<HTMLDivElement>(null);
  const map = useRef<L.Map>(undefined);
  const layer = useRef<L.LayerGroup>(undefined);
  const markers = useRef(new Map<string, Held>());
  const pending = useRef(new PendingChanges());
  const pacer = useRef(new Pacer(CLUSTER_FRAME_BUDGET_MS));
  const latest = useRef<MapPoint[]>([]);
  const frame = useRef(0);
  const fitted = useRef(false);
  const fittedFor = useRef(fitKey);
  const pick = useRef(onPick);
  pick.current = onPick;
  const view = useRef(onView);
  view.current = onView;

  useEffect(() => {
    const m = L.map(element.current!, {
      center: center ?? [-1.286, 36.817],
      zoom: 12,
      attributionControl: true,
      zoomAnimation: false,
    });
    L.tileLayer(tileUrl(), { maxZoom: 19, attribution: '© OpenStreetMap contributors' }).addTo(m);
    // No chunkedLoading: the slices per frame below are the chunks (its own run up to 200 ms each).
    // At street level (zoom 16 and closer) every driver is drawn on his own; that also spares the
    // four closest of the twenty zoom levels that markercluster files each moved marker in.
    layer.current = (
      cluster
        ? L.markerClusterGroup({
            showCoverageOnHover: false,
            disableClusteringAtZoom: 16,
            iconCreateFunction: clusterIcon,
          })
        : L.layerGroup()
    ).addTo(m);
    m.on('click', (e: L.LeafletMouseEvent) =>
      pick.current?.(Number(e.latlng.lat.toFixed(6)), Number(e.latlng.lng.toFixed(6))),
    );
    const reportView = () => {
      const b = m.getBounds();
      view.current?.({ west: b.getWest(), south: b.getSouth(), east: b.getEast(), north: b.getNorth() });
    };
    m.on('moveend', reportView);
    reportView();
    map.current = m;
    const current = markers.current;
    const queue = pending.current;
    return () => {
      cancelAnimationFrame(frame.current);
      frame.current = 0;
      fitted.current = false;
      current.clear();
      queue.clear();
      map.current = undefined;
      layer.current = undefined;
      m.remove();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the map is built once; points flow in through the effect below
  }, []);

  useEffect(() => {
    latest.current = points;
    pending.current.set(points);
    if (fitKey !== fittedFor.current) {
      fittedFor.current = fitKey;
      fitted.current = false;
    }
    if (frame.current) return;
    const apply = (changes: Change[], group: L.LayerGroup) => {
      const added: L.CircleMarker[] = [];
      const removed: L.CircleMarker[] = [];
      const moved: [L.CircleMarker, MapPoint][] = [];
      for (const [id, p] of changes) {
        const held = markers.current.get(id);
        if (!p) {
          if (held) {
            removed.push(held.marker);
            markers.current.delete(id);
          }
          continue;
        }
        if (held && held.kind === p.kind) {
          if (held.label !== p.label) {
            held.label = p.label;
            held.marker.getTooltip()?.update();
          }
          const at = held.marker.getLatLng();
          if (at.lat !== p.lat || at.lng !== p.lng) moved.push([held.marker, p]);
          continue;
        }
        if (held) removed.push(held.marker);
        const fresh = marker(p);
        markers.current.set(id, fresh);
        added.push(fresh.marker);
      }
      if (cluster) {
        // A cluster group places a marker when it is added: a moved one goes out and back in, all
        // of the slice at once (each call re-draws the clusters in view once).
        const g = group as L.MarkerClusterGroup & { _ignoreMove?: boolean };
        const out = moved.length ? [...removed, ...moved.map(([m]) => m)] : removed;
        if (out.length) g.removeLayers(out);
        // removeLayers (unlike removeLayer) leaves the group's 'move' listener on each marker, and
        // that listener re-adds a moved marker on its own, re-drawing the clusters each time (with
        // 5,000 drivers in B12, seconds-long tasks): the group is told to ignore these moves, as it
        // does for its own (spiderfying).
        const ignoring = g._ignoreMove;
        g._ignoreMove = true;
        for (const [m, p] of moved) m.setLatLng([p.lat, p.lng]);
        g._ignoreMove = ignoring;
        const into = moved.length ? [...added, ...moved.map(([m]) => m)] : added;
        if (into.length) g.addLayers(into);
      } else {
        for (const r of removed) group.removeLayer(r);
        for (const [m, p] of moved) m.setLatLng([p.lat, p.lng]);
        for (const a of added) group.addLayer(a);
      }
    };
    const flush = () => {
      frame.current = 0;
      const group = layer.current;
      const m = map.current;
      if (!group || !m) return;
      const started = performance.now();
      const changes = pending.current.take(cluster ? pacer.current.size() : Infinity);
      apply(changes, group);
      pacer.current.record(changes.length, performance.now() - started);
      const next = latest.current;
      if (fit && !fitted.current && next.length) {
        fitted.current = next.length > 1 || !onPick;
        const bounds = L.latLngBounds(next.map((p) => [p.lat, p.lng] as [number, number]));
        // Not animated: a page left mid-animation would have Leaflet touch a removed map.
        m.fitBounds(bounds.pad(0.3), { maxZoom: 15, animate: false });
      }
      if (pending.current.size) frame.current = requestAnimationFrame(flush);
    };
    frame.current = requestAnimationFrame(flush);
  }, [points, cluster, fit, fitKey, onPick]);

  return <div ref={element} className="map" role="region" aria-label={label} />;
}
