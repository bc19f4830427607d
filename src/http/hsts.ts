// Strict-Transport-Security on every answer to a request that came over https: the socket's own TLS,
// or X-Forwarded-Proto from a proxy that TRUST_PROXY trusts (Fastify's request.protocol reads the
// header only when the peer is trusted, so a client cannot claim https). Over plain http it would be
// ignored by browsers anyway, and a development server on http://localhost must not be pinned.
// Set in app.ts's per-request onRequest hook (with X-Request-Id), so that every answer has it: errors,
// 404s, the web pages, the event streams.
import type { FastifyReply, FastifyRequest } from 'fastify';

export const HSTS = 'max-age=31536000; includeSubDomains';

export function strictTransportSecurity(request: FastifyRequest, reply: FastifyReply): void {
  if (request.protocol === 'https') reply.header('strict-transport-security', HSTS);
}
