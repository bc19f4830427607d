// Dispatch's log of one job for an admin (contract section 13): its dispatch state, offers and releases.
import { json } from '../../db/json.js';
import { notFound } from '../../shared/errors.js';
import type { DispatchRepository } from './dispatch.repository.js';
import { WAITING } from './dispatch.types.js';
import type { Choice } from './policy.js';

/** The job's dispatch as an admin reads it; a job that does not exist is a 404. */
export async function dispatchLog(repo: DispatchRepository, maxReleases: number, jobId: string) {
  const found = await repo.jobExists(jobId);
  if (!found) throw notFound('Job not found', 'JOB_NOT_FOUND');
  const { job, offers, releases } = await repo.log(jobId);
  const releaseCount = await repo.releaseCount(found.jobType, jobId);
  const waiting = found.status === WAITING[found.jobType];
  const state = waiting ? (job && job.state !== 'DONE' ? job.state : 'OFF') : job ? 'DONE' : 'OFF';
  return {
    jobId,
    jobType: found.jobType,
    status: found.status,
    dispatch: {
      state,
      attempts: job?.attempts ?? 0,
      nextAttemptAt: job && waiting ? new Date(job.next_attempt_at).toISOString() : null,
    },
    // A scheduled job (section 22): its start, the lead it entered dispatch by, and when it did.
    scheduled:
      job?.scheduled_start && job.lead_seconds !== null && job.lead_seconds !== undefined
        ? {
            start: new Date(job.scheduled_start).toISOString(),
            leadSeconds: job.lead_seconds,
            leadSamples: job.lead_samples ?? 0,
            enteredAt: job.entered_at ? new Date(job.entered_at).toISOString() : null,
            customerToldAt: job.notified_at ? new Date(job.notified_at).toISOString() : null,
          }
        : null,
    offers: offers.map((o) => {
      const choice = json<Choice>(o.choice as never);
      return {
        id: o.id,
        driverId: o.driver_id,
        outcome: o.state,
        sentAt: new Date(o.created_at).toISOString(),
        expiresAt: new Date(o.expires_at).toISOString(),
        answeredAt: o.answered_at ? new Date(o.answered_at).toISOString() : null,
        why: {
          etaSeconds: choice.etaSeconds,
          distanceMeters: choice.distanceMeters,
          radiusMeters: choice.radiusMeters,
          candidates: choice.candidates,
          skipped: choice.skipped,
          ...(choice.batch ? { batch: choice.batch } : {}),
        },
      };
    }),
    releases: releases.map((r) => ({
      driverId: r.driver_id,
      reason: r.reason,
      actorId: r.actor_id,
      at: new Date(r.at).toISOString(),
    })),
    releaseCount,
    flagged: releaseCount > maxReleases,
  };
}
