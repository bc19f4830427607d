// The current job as last seen, kept on the phone so that the app opened offline still shows it
// (contract section 19). It holds the contacts' names and phones of that one job: it is removed when
// the job ends and on sign-out.
import type { Job } from './types';

const KEY = 'driver.lastJob';

export interface SavedJob {
  job: Job;
  savedAt: string;
}

export function saveJob(job: Job) {
  try {
    localStorage.setItem(KEY, JSON.stringify({ job, savedAt: new Date().toISOString() } satisfies SavedJob));
  } catch {
    // Storage full or refused: the app still works online.
  }
}

export function loadJob(): SavedJob | undefined {
  try {
    const raw = localStorage.getItem(KEY);
    return raw ? (JSON.parse(raw) as SavedJob) : undefined;
  } catch {
    return undefined;
  }
}

export function forgetJob() {
  localStorage.removeItem(KEY);
}
