// Background work that each instance runs on a timer while the app is up (sweeps, purges): started
// when the app is ready, never overlapping itself, stopped and awaited when the app closes.
import type { FastifyInstance } from 'fastify';
import { isDatabaseUnavailable } from '../db/availability.js';

export function runPeriodically(
  app: FastifyInstance,
  options: { name: string; everyMs: number; atStart?: boolean; run: () => Promise<unknown> },
): void {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  const tick = () => {
    running ??= options
      .run()
      // The database being away is logged once by the pool's watcher; the next turn tries again.
      .catch((err) => isDatabaseUnavailable(err) || app.log.warn({ err }, `${options.name} failed`))
      .finally(() => (running = undefined));
  };
  app.addHook('onReady', async () => {
    if (options.atStart) tick();
    timer = setInterval(tick, options.everyMs);
    timer.unref();
  });
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await running;
  });
}
