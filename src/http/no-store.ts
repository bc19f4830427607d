// Cache-Control: no-store on every answer to a request that carried credentials (contract section 19,
// amended by issue 39): a package, an invoice, a CSV, a proof image, the metrics, an error. What it
// says is personal or financial, and no browser or shared cache may keep it. A route that already
// chose no-store (the event streams' `no-cache, no-store, no-transform`) keeps its value; any weaker
// one gives way. Public answers (countries, the tracking link, the web pages and their assets) carry
// no credentials and keep their own caching.
import type { FastifyInstance } from 'fastify';

const NO_STORE = /(?:^|,)\s*no-store\s*(?:,|$)/i;

/** Whether the request carried credentials: a bearer header (a user's or the metrics token) or a token the guard accepted. */
const carriedCredentials = (request: { headers: { authorization?: string }; auth?: unknown }) =>
  request.headers.authorization !== undefined || request.auth !== undefined;

export function noStoreForCredentials(app: FastifyInstance): void {
  // A callback hook: every request pays it.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (carriedCredentials(request)) {
      const current = reply.getHeader('cache-control');
      if (typeof current !== 'string' || !NO_STORE.test(current)) reply.header('cache-control', 'no-store');
    }
    done(null, payload);
  });
}
