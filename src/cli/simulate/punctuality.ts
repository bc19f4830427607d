// The end-of-run reading of the jobs booked ahead (contract sections 22 and 23): from the instance's own
// records (each job's status history, its dispatch log, the alerts), whether its pickup started inside
// its window, which jobs were late, the lead used, offers made too early, and the alerts raised by kind.
import { ApiError } from './client.js';
import type { JobRecord } from './model.js';
import { RIDE_PICKUP_GRACE_MS } from './schedule.js';

export interface Punctuality {
  /** Jobs booked ahead (those of the recurring jobs included), cancelled ones left out. */
  booked: number;
  recurring: number;
  /** Due: picked up, or their pickup window has ended. The share is over these. */
  due: number;
  inWindow: number;
  early: number;
  latePickups: number;
  /** Not due by the end of the run (their window still open, not picked up). */
  notDue: number;
  inWindowShare: number | null;
  /** Late pickups by when the job was taken: never, after the window's start, before it (the drive was too long). */
  lateBecause: { neverAssigned: number; assignedAfterStart: number; assignedBeforeStart: number };
  /** Offers sent before start − lead − 60 s (never expected), and the leads used (seconds). */
  offeredEarly: number;
  leadSeconds: { min: number | null; p50: number | null; max: number | null };
}

export interface Lateness {
  /** Jobs late at the pickup (after the window's end, or its end passed before any pickup) or the drop-off. */
  jobs: number;
  pickup: number;
  dropoff: number;
  /** Of them, made late on purpose (--late-share). */
  onPurpose: number;
  /** Up to 50 of their ids, for checking against the instance. */
  ids: string[];
}

interface History {
  status: string;
  at: string;
}

export interface JobFacts {
  status: string;
  history: History[];
  lead?: { start: string; leadSeconds: number } | null;
  firstOfferAt?: string | null;
}

type Read = <T>(path: string) => Promise<T>;

/** Reads each booked-ahead job (as the admin), eight at a time. */
export async function readFacts(read: Read, jobs: JobRecord[]): Promise<Map<string, JobFacts>> {
  const facts = new Map<string, JobFacts>();
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++];
      const path = job.type === 'PACKAGE' ? `/packages/${job.id}` : `/rides/${job.id}`;
      const body = await read<{ status: string; statusHistory: History[] }>(path);
      const log = await read<{
        scheduled: { start: string; leadSeconds: number } | null;
        offers: { sentAt: string }[];
      }>(`/admin/dispatch/${job.id}`).catch(() => undefined);
      const firstOffer = log?.offers.map((o) => o.sentAt).sort()[0];
      facts.set(job.id, {
        status: body.status,
        history: body.statusHistory,
        lead: log?.scheduled,
        firstOfferAt: firstOffer ?? null,
      });
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return facts;
}

const at = (history: History[], ...statuses: string[]): number | undefined => {
  const item = history.find((h) => statuses.includes(h.status));
  return item ? Date.parse(item.at) : undefined;
};
const lastAt = (history: History[], ...statuses: string[]): number | undefined => {
  const items = history.filter((h) => statuses.includes(h.status));
  return items.length ? Date.parse(items[items.length - 1].at) : undefined;
};

function median(sorted: number[]): number | null {
  return sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)] : null;
}

/**
 * A package's pickup is inside its window when PICKED_UP is stamped between the window's start and end;
 * a ride's when ARRIVED is stamped by scheduledAt + 5 minutes (the driver waits for scheduledAt to
 * start it). Late at the drop-off: DELIVERED (or FAILED) after the drop-off window's end, or neither
 * by then. `nowMs` is the instance's time at the end of the run.
 */
export function assess(
  jobs: JobRecord[],
  facts: Map<string, JobFacts>,
  nowMs: number,
): { punctuality: Punctuality; late: Lateness } {
  const p: Punctuality = {
    booked: 0,
    recurring: 0,
    due: 0,
    inWindow: 0,
    early: 0,
    latePickups: 0,
    notDue: 0,
    inWindowShare: null,
    lateBecause: { neverAssigned: 0, assignedAfterStart: 0, assignedBeforeStart: 0 },
    offeredEarly: 0,
    leadSeconds: { min: null, p50: null, max: null },
  };
  const late: Lateness = { jobs: 0, pickup: 0, dropoff: 0, onPurpose: 0, ids: [] };
  const leads: number[] = [];
  for (const job of jobs) {
    const f = facts.get(job.id);
    if (!f) continue;
    const window =
      job.type === 'PACKAGE'
        ? job.pickupWindow
        : job.scheduledAt !== undefined
          ? { start: job.scheduledAt, end: job.scheduledAt + RIDE_PICKUP_GRACE_MS }
          : undefined;
    if (!window) continue;
    const picked = job.type === 'PACKAGE' ? at(f.history, 'PICKED_UP') : at(f.history, 'ARRIVED');
    if (f.status === 'CANCELLED' && picked === undefined) continue;
    p.booked++;
    if (job.recurring) p.recurring++;
    if (f.lead) {
      leads.push(f.lead.leadSeconds);
      const from = Date.parse(f.lead.start) - f.lead.leadSeconds * 1000 - 60_000;
      if (f.firstOfferAt && Date.parse(f.firstOfferAt) < from) p.offeredEarly++;
    }
    let pickupLate = false;
    if (picked === undefined && nowMs <= window.end) p.notDue++;
    else {
      p.due++;
      if (picked !== undefined && picked < window.start && job.type === 'PACKAGE') p.early++;
      else if (picked !== undefined && picked <= window.end) p.inWindow++;
      else {
        pickupLate = true;
        p.latePickups++;
        const assigned = lastAt(f.history, 'ASSIGNED', 'ACCEPTED');
        if (assigned === undefined) p.lateBecause.neverAssigned++;
        else if (assigned > window.start) p.lateBecause.assignedAfterStart++;
        else p.lateBecause.assignedBeforeStart++;
      }
    }
    let dropoffLate = false;
    if (job.type === 'PACKAGE' && job.dropoffWindow) {
      const done = at(f.history, 'DELIVERED', 'FAILED');
      dropoffLate = done !== undefined ? done > job.dropoffWindow.end : nowMs > job.dropoffWindow.end;
    }
    if (pickupLate) late.pickup++;
    if (dropoffLate) late.dropoff++;
    if (pickupLate || dropoffLate) {
      late.jobs++;
      if (job.lateOnPurpose) late.onPurpose++;
      if (late.ids.length < 50) late.ids.push(job.id);
    }
  }
  p.inWindowShare = p.due ? Math.round((p.inWindow / p.due) * 10_000) / 10_000 : null;
  leads.sort((a, b) => a - b);
  p.leadSeconds = { min: leads[0] ?? null, p50: median(leads), max: leads[leads.length - 1] ?? null };
  return { punctuality: p, late };
}

/**
 * The alerts raised for the run's jobs, by kind (section 23's `GET /alerts`, as the admin, paginated).
 * Null when the instance has no such endpoint (404): the report then says "alerts: n/a".
 */
export async function readAlerts(read: Read, ours: (jobId: string) => boolean): Promise<Record<string, number> | null> {
  const byKind: Record<string, number> = {};
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    let body: { items: { kind: string; jobId: string }[]; nextCursor?: string | null };
    try {
      body = await read(`/alerts?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404 && page === 0) return null;
      throw err;
    }
    for (const alert of body.items ?? []) if (ours(alert.jobId)) byKind[alert.kind] = (byKind[alert.kind] ?? 0) + 1;
    cursor = body.nextCursor ?? null;
    if (!cursor) break;
  }
  return byKind;
}
