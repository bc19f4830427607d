// What each instance does when a job changes (job.changed reaches every instance): tell its own
// driver index (driver.job) and the driver's WebSocket if connected here (driver.push).
import type { Bus } from '../../shared/bus.js';

export function followJobChanges(bus: Bus): () => void {
  return bus.subscribe('job.changed', ({ jobType, jobId, status, driverId, actorId, assigned, final, released }) => {
    if (!driverId) return;
    if (assigned) {
      bus.publishHere('driver.job', { driverId, busy: true, jobId, jobType });
      bus.publishHere('driver.push', { driverId, message: { type: 'job.assigned', jobType, jobId, status } });
      return;
    }
    if (final || released) bus.publishHere('driver.job', { driverId, busy: false, jobId, jobType });
    if (driverId !== actorId)
      bus.publishHere('driver.push', { driverId, message: { type: 'job.updated', jobType, jobId, status } });
  });
}
