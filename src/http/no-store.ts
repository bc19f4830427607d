// Cache-Control: no-store on every answer to a request that carried credentials (contract section 19,
// amended by issue 39): a package, an invoice, a CSV, a proof image, the metrics, an error. What it
// says is personal or financial, and no browser or shared cache may keep it. Any value a route set
// gives way (the event streams are hijacked and set theirs themselves). Public answers (countries, the tracking link, the web pages and their assets) carry
// no credentials and keep their own caching.
import type { FastifyInstance } from 'fastify';

/** Whether the request carried credentials: a bearer header (a user's or the metrics token) or a token the guard accepted. */
const carriedCredentials = (request: { headers: { authorization?: string }; auth?: unknown }) =>
  request.headers.authorization !== undefined || request.auth !== undefined;

export function noStoreForCredentials(app: FastifyInstance): void {
  // A callback hook: every request pays it.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (carriedCredentials(request)) reply.header('cache-control', 'no-store');
    done(null, payload);
  });
}
