// Every answer ready during one event-loop turn is written at its end (setImmediate), back to back:
// most of a small write's cost is waking the receiver, which writes in a row find awake
// (bench/RESULTS.md). An answer waits at most for the requests that arrived with it.
import type { FastifyInstance } from 'fastify';

export function coalesceWrites(app: FastifyInstance): void {
  // Two arrays rather than a closure per answer (every request pays this).
  let dones: ((err: null, payload: unknown) => void)[] = [];
  let payloads: unknown[] = [];
  const writeAll = () => {
    const batch = dones;
    const batchPayloads = payloads;
    dones = [];
    payloads = [];
    for (let i = 0; i < batch.length; i++) batch[i](null, batchPayloads[i]);
  };
  app.addHook('onSend', (_request, _reply, payload, done) => {
    payloads.push(payload);
    if (dones.push(done) === 1) setImmediate(writeAll);
  });
}
