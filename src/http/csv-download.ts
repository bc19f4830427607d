// The CSV downloads' shared rules: a list or report answers CSV for `format=csv`, or for an Accept
// header asking for text/csv when `format` is absent (`format` wins: a download link says it); the
// file comes as an attachment with its name.
import type { FastifyReply, FastifyRequest } from 'fastify';

export function wantsCsv(request: FastifyRequest): boolean {
  const format = (request.query as { format?: 'json' | 'csv' } | undefined)?.format;
  return format === 'csv' || (format === undefined && /\btext\/csv\b/i.test(request.headers.accept ?? ''));
}

export function sendCsv(reply: FastifyReply, filename: string, csv: string): FastifyReply {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .send(csv);
}
