// What tracking writes: the job's snapshot and its public state, status frames, replay cursors and the
// ETA toward the step's target (split from tracking-hub.ts, which re-exports what callers use).
import { sseFrame } from '../../http/sse.js';
import type { AuthContext } from '../../shared/auth-context.js';
import { distanceMeters, type Position } from '../matching/driver-index.js';
import { etaSeconds } from '../matching/found-drivers-json.js';
import type { VehicleType } from '../../db/schema.js';

export type JobType = 'PACKAGE' | 'RIDE';
/** At most this many missed status events are replayed; further behind, the client gets `resync`. */
export const MAX_REPLAY = 100;
/** A followed job whose read failed (database away) is read again after this. */

export interface HistoryEntry {
  status: string;
  at: string;
  reason?: string;
  /** A failed package's reason code (contract section 23). */
  reasonCode?: string;
}

export interface JobSnapshot {
  jobType: JobType;
  jobId: string;
  status: string;
  final: boolean;
  history: HistoryEntry[];
  driverId: string | null;
  driver: { firstName: string; vehicleType: VehicleType; vehiclePlate: string } | null;
  /** The newest position known (live index or its stored copy), when a driver is on the job. */
  position: Position | null;
  pickup: { lat: number; lng: number };
  dropoff: { lat: number; lng: number };
  /** What the job is promised for (contract section 22): windows (packages), scheduledAt (rides), its time zone. */
  promised: {
    pickupWindow: { start: string; end: string } | null;
    dropoffWindow: { start: string; end: string } | null;
    scheduledAt: string | null;
    timeZone: string | null;
  };
  updatedAt: string;
  canSee(auth: AuthContext): boolean;
  /** The ETA by road (a router other than straight) of the position at `at`, once computed. */
  roadEta?: { at: number; to: 'PICKUP' | 'DROPOFF'; etaSeconds: number };
}

export type SnapshotLoader = (jobType: JobType, jobId: string) => Promise<JobSnapshot | undefined>;

/** Statuses in which a driver is on the job, and where it is heading. */
export const HEADING: Record<string, 'PICKUP' | 'DROPOFF'> = {
  ASSIGNED: 'PICKUP',
  PICKED_UP: 'DROPOFF',
  IN_TRANSIT: 'DROPOFF',
  ACCEPTED: 'PICKUP',
  ARRIVED: 'PICKUP',
  IN_PROGRESS: 'DROPOFF',
};

export function encodeCursor(jobId: string, seq: number): string {
  return Buffer.from(`${jobId}.${seq}`).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): { jobId: string; seq: number } | undefined {
  if (!cursor || cursor.length > 100) return undefined;
  const match = /^([0-9a-f-]{36})\.(\d{1,6})$/.exec(Buffer.from(cursor, 'base64url').toString());
  return match ? { jobId: match[1]!, seq: Number(match[2]) } : undefined;
}

/** A status event; its id is the job's cursor at that entry (its 1-based place in the history). */
export function statusFrame(jobType: JobType, jobId: string, seq: number, entry: HistoryEntry): string {
  // A reason is free text written by a driver or an operator: callers leave it out for the public link.
  const reason = entry.reason !== undefined && entry.reason !== null ? { reason: entry.reason } : {};
  const code = entry.reasonCode !== undefined && entry.reasonCode !== null ? { reasonCode: entry.reasonCode } : {};
  return sseFrame(
    'status',
    { jobType, jobId, status: entry.status, at: entry.at, ...reason, ...code },
    encodeCursor(jobId, seq),
  );
}

/** The whole state a follower needs: the public view (no phones, names of contacts, addresses or account ids). */
export function publicState(snap: JobSnapshot, nowMs: number, positionTtlMs: number) {
  const heading = HEADING[snap.status];
  const position = heading && snap.position && nowMs - snap.position.at <= positionTtlMs ? snap.position : null;
  return {
    status: snap.status,
    statusHistory: snap.history.map((h) => ({ status: h.status, at: h.at })),
    driver: snap.driver && {
      firstName: snap.driver.firstName,
      vehicleType: snap.driver.vehicleType,
      vehiclePlate: snap.driver.vehiclePlate,
      location: heading && position ? { lat: position.lat, lng: position.lng } : null,
    },
    pickup: { location: snap.pickup },
    dropoff: { location: snap.dropoff },
    etaSeconds: position && snap.driver ? eta(snap, position).etaSeconds : null,
    ...snap.promised,
    updatedAt: snap.updatedAt,
  };
}

export function eta(snap: JobSnapshot, p: { lat: number; lng: number; at?: number }) {
  const to = HEADING[snap.status] ?? 'DROPOFF';
  const road = snap.roadEta;
  if (road && road.at === p.at && road.to === to) return { etaSeconds: road.etaSeconds, to };
  const target = to === 'PICKUP' ? snap.pickup : snap.dropoff;
  return {
    etaSeconds: etaSeconds(distanceMeters(p.lat, p.lng, target.lat, target.lng), snap.driver?.vehicleType ?? 'CAR'),
    to,
  };
}
