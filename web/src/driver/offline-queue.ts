// Taps made while the phone is offline (contract section 19): each job step is sent with an
// Idempotency-Key; when the network fails it is queued (localStorage, so that a reload keeps it) and
// replayed in order once the phone is back online. The server's answer wins: a step it refuses (the
// job was cancelled meanwhile, say) is dropped with the steps queued after it for that job, and the
// job is shown as the server has it.
import { useEffect, useRef, useSyncExternalStore } from 'react';
import { api, ok } from '../shared/api/client';
import { ApiError } from '../shared/api/errors';
import type { Job } from './types';

const KEY = 'driver.queuedSteps';

export interface QueuedStep {
  /** Sent as the Idempotency-Key: a replay of a step that did land is recognised as such. */
  key: string;
  jobType: 'PACKAGE' | 'RIDE';
  jobId: string;
  /** The last segment of the action's path: pickup, start, deliver, fail, arrive, complete. */
  action: string;
  body?: Record<string, unknown>;
  /** The job's status once the step is applied. */
  expect: string;
  /** The button's words, for the screen. */
  label: string;
  queuedAt: string;
}

type Listener = () => void;
const listeners = new Set<Listener>();
let cached: QueuedStep[] | undefined;

function read(): QueuedStep[] {
  if (cached) return cached;
  try {
    const parsed = JSON.parse(localStorage.getItem(KEY) ?? '[]') as unknown;
    cached = Array.isArray(parsed) ? (parsed as QueuedStep[]) : [];
  } catch {
    cached = [];
  }
  return cached;
}

function write(steps: QueuedStep[]) {
  cached = steps;
  try {
    if (steps.length) localStorage.setItem(KEY, JSON.stringify(steps));
    else localStorage.removeItem(KEY);
  } catch {
    // Storage refused: the queue still lives in this page.
  }
  for (const l of listeners) l();
}

export const queuedSteps = {
  list: read,
  add: (step: QueuedStep) => write([...read(), step]),
  remove: (key: string) => write(read().filter((s) => s.key !== key)),
  dropJob: (jobId: string) => write(read().filter((s) => s.jobId !== jobId)),
  clear: () => write([]),
  subscribe(listener: Listener) {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  },
};

// Another tab of the app changed the queue.
if (typeof window !== 'undefined') {
  window.addEventListener('storage', (e) => {
    if (e.key !== KEY) return;
    cached = undefined;
    for (const l of listeners) l();
  });
}

/** The steps queued for a job, live. */
export function useQueuedSteps(jobId?: string): QueuedStep[] {
  const all = useSyncExternalStore(queuedSteps.subscribe, read);
  return jobId ? all.filter((s) => s.jobId === jobId) : all;
}

/** A random UUID (crypto.randomUUID needs a secure context; getRandomValues does not). */
export function newKey(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A failure of the network (fetch throws a TypeError), not an answer of the server. */
export const isNetworkFailure = (err: unknown) => err instanceof TypeError;

async function send(step: QueuedStep): Promise<Job> {
  const path = `/api/${step.jobType === 'PACKAGE' ? 'packages' : 'rides'}/{id}/${step.action}`;
  const post = api.POST as unknown as (
    path: string,
    init: unknown,
  ) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
  const job = await ok(
    post(path, { params: { path: { id: step.jobId } }, body: step.body, headers: { 'Idempotency-Key': step.key } }),
  );
  return step.jobType === 'PACKAGE'
    ? { jobType: 'PACKAGE', job: job as never }
    : { jobType: 'RIDE', job: job as never };
}

async function fetchJob(step: Pick<QueuedStep, 'jobType' | 'jobId'>): Promise<Job> {
  const options = { params: { path: { id: step.jobId } } };
  return step.jobType === 'PACKAGE'
    ? { jobType: 'PACKAGE', job: await ok(api.GET('/api/packages/{id}', options)) }
    : { jobType: 'RIDE', job: await ok(api.GET('/api/rides/{id}', options)) };
}

/**
 * Sends a step now, or queues it when the phone is offline (or the request never reached the
 * server). Queued, it answers the job as it will be once the step lands, marked by `queued`.
 */
export async function performStep(
  job: Job,
  step: Omit<QueuedStep, 'key' | 'queuedAt' | 'jobType' | 'jobId'>,
): Promise<Job & { queued?: boolean }> {
  const full: QueuedStep = {
    ...step,
    key: newKey(),
    jobType: job.jobType,
    jobId: job.job.id,
    queuedAt: new Date().toISOString(),
  };
  // Behind steps already queued for this job: in order, never ahead of them.
  const waiting = read().some((s) => s.jobId === full.jobId);
  if (navigator.onLine && !waiting) {
    try {
      return await send(full);
    } catch (err) {
      if (!isNetworkFailure(err)) throw err;
    }
  }
  queuedSteps.add(full);
  return { ...job, job: { ...job.job, status: step.expect }, queued: true } as Job & { queued?: boolean };
}

export interface ReplayHandlers {
  /** The server applied a step (or had applied it already): its job. */
  applied(job: Job): void;
  /** The server refused a step: the job as it has it now (undefined when it could not be read). */
  refused(step: QueuedStep, err: ApiError, job: Job | undefined): void;
}

let replaying: Promise<void> | undefined;

/** Sends the queued steps in order; stops at the first network failure (they wait for the next try). */
export function replayQueuedSteps(handlers: ReplayHandlers): Promise<void> {
  replaying ??= (async () => {
    try {
      for (let step = read()[0]; step; step = read()[0]) {
        try {
          const job = await send(step);
          queuedSteps.remove(step.key);
          handlers.applied(job);
        } catch (err) {
          // Not reached, or the server failing or the session to renew: later, in the same order.
          if (!(err instanceof ApiError) || err.status >= 500 || err.status === 401 || err.status === 429) return;
          const current = await fetchJob(step).catch(() => undefined);
          if (current && current.job.status === step.expect) {
            // It had landed: only its answer was lost.
            queuedSteps.remove(step.key);
            handlers.applied(current);
            continue;
          }
          // The server's answer wins; the steps queued after this one for the job were based on it.
          queuedSteps.dropJob(step.jobId);
          handlers.refused(step, err, current);
        }
      }
    } finally {
      replaying = undefined;
    }
  })();
  return replaying;
}

/** How often queued steps are tried again while some wait (besides the browser's `online` event). */
const RETRY_MS = 15_000;

/** Replays the queued steps when the app starts, when the phone is back online, and every 15 s while some wait. */
export function useStepReplay(handlers: ReplayHandlers) {
  const latest = useRef(handlers);
  latest.current = handlers;
  const waiting = useQueuedSteps().length > 0;
  useEffect(() => {
    const run = () => {
      if (navigator.onLine && read().length)
        void replayQueuedSteps({
          applied: (j) => latest.current.applied(j),
          refused: (s, e, j) => latest.current.refused(s, e, j),
        });
    };
    run();
    window.addEventListener('online', run);
    const timer = waiting ? setInterval(run, RETRY_MS) : undefined;
    return () => {
      window.removeEventListener('online', run);
      if (timer) clearInterval(timer);
    };
  }, [waiting]);
}
