// The OpenAPI document's shared parts, added once here rather than on every route: declared tags,
// operationIds, `security: []` on public routes, the standard error responses (in the error schema)
// with the rate-limit headers, so that `npx @redocly/cli lint` and Spectral (spectral:oas + OWASP)
// pass and the console's generated client has stable names. Routes keep their own summaries and the
// errors they declare; this only fills in what they leave out.

type Json = Record<string, any>;

export const TAGS: { name: string; description: string }[] = [
  { name: 'operations', description: 'Health and readiness (outside /api, not rate limited)' },
  { name: 'reference', description: 'Reference data: countries' },
  { name: 'auth', description: 'Registration, login with the SMS code, tokens, passwords' },
  { name: 'admin', description: 'Administration: accounts, approvals, countries, tariffs, jobs' },
  { name: 'drivers', description: 'The driver app: profile, availability, location, jobs' },
  { name: 'businesses', description: "A business's profile" },
  { name: 'companies', description: "A company's profile and drivers" },
  { name: 'matching', description: 'Finding the nearest eligible drivers' },
  { name: 'packages', description: 'Package deliveries and their lifecycle' },
  { name: 'rides', description: 'Rides and their lifecycle' },
  { name: 'webhooks', description: "A business's webhook endpoints and their delivery log" },
  { name: 'dispatch', description: 'Offers of jobs to drivers' },
  { name: 'pricing', description: 'Quotes and fares' },
  { name: 'tracking', description: 'Live tracking: public tracking links and event streams' },
  { name: 'push', description: "Web Push: the VAPID key and the browsers' push subscriptions" },
  { name: 'ratings', description: 'Ratings and tips after a job ends' },
  { name: 'geocoding', description: 'Address search (a proxy of the configured geocoder)' },
  { name: 'optimization', description: "Route optimization in VROOM's problem and solution shapes" },
  { name: 'recurring-jobs', description: "A business's recurring jobs: RRULE templates materialised as packages" },
  { name: 'alerts', description: 'Lateness alerts: the exceptions queue, acknowledge and resolve' },
  { name: 'routes', description: "A driver's route: its stops and their order, maxActiveJobs, vehicle capacities" },
];

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': {
    description: 'Requests allowed in the window',
    schema: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the window',
    schema: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the window resets',
    schema: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
  },
};
const RETRY_AFTER = {
  description: 'Seconds to wait before trying again',
  schema: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
};

const ERROR_DESCRIPTIONS: Record<string, string> = {
  '400': 'Invalid input (the message names the field)',
  '401': 'Missing, invalid or expired credentials',
  '403': 'Not allowed for this account',
  '404': 'Not found (or not yours)',
  '409': 'Conflict with the current state',
  '429': 'Too many requests: wait Retry-After seconds',
  '500': 'Unexpected error (no detail is given)',
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** `post /api/packages/{id}/accept` → `postPackagesIdAccept`: stable, unique, derived from the route. */
export function operationIdFor(method: string, path: string): string {
  const words = path
    .replace(/^\/api(?=\/|$)/, '')
    .split(/[/{}_.-]+/)
    .filter(Boolean);
  return method + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

const errorRef = () => ({ $ref: '#/components/schemas/ErrorResponse' });

function errorResponse(status: string, existing: Json | undefined, limited: boolean): Json {
  const response: Json = existing ? { ...existing } : { description: ERROR_DESCRIPTIONS[status] ?? 'Error' };
  if (!response.description || response.description === 'Default Response')
    response.description = ERROR_DESCRIPTIONS[status] ?? 'Error';
  response.content = { 'application/json': { schema: existing?.content?.['application/json']?.schema ?? errorRef() } };
  if (limited) {
    response.headers = { ...(response.headers ?? {}), ...rateLimitHeaderRefs() };
    if (status === '429') response.headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
  }
  return response;
}

function rateLimitHeaderRefs(): Json {
  return Object.fromEntries(Object.keys(RATE_LIMIT_HEADERS).map((h) => [h, { $ref: `#/components/headers/${h}` }]));
}

/**
 * The longest string an anchored pattern of fixed-size pieces can match (`^\\+[1-9][0-9]{6,14}$` → 16),
 * or undefined when it is unbounded or too intricate to tell.
 */
export function patternMaxLength(pattern: string): number | undefined {
  if (!pattern.startsWith('^') || !pattern.endsWith('$')) return undefined;
  const body = pattern.slice(1, -1);
  const piece = /(\\.|\[(?:\\.|[^\]])+\]|[^\\[\](){}|*+?^$])(\{(\d+)(?:,(\d+))?\}|\?)?/y;
  let total = 0;
  let at = 0;
  while (at < body.length) {
    piece.lastIndex = at;
    const m = piece.exec(body);
    if (!m) return undefined;
    total += m[2] === '?' ? 1 : m[3] !== undefined ? Number(m[4] ?? m[3]) : 1;
    at = piece.lastIndex;
  }
  return total;
}

/**
 * Request schemas: the bounds the validator already enforces, written out where the route left them
 * implied (a uuid is 36 characters, a fixed-size pattern has a longest match, a bounded integer fits
 * int32), so that the document states them.
 */
function stateImpliedBounds(schema: unknown): void {
  if (!schema || typeof schema !== 'object') return;
  if (Array.isArray(schema)) return schema.forEach(stateImpliedBounds);
  const s = schema as Json;
  const types: string[] = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('string') && s.maxLength === undefined && s.enum === undefined && s.const === undefined) {
    const implied = s.format === 'uuid' ? 36 : typeof s.pattern === 'string' ? patternMaxLength(s.pattern) : undefined;
    if (implied !== undefined) s.maxLength = implied;
  }
  if (types.includes('integer') && s.format === undefined) {
    const int32 = (v: unknown) => typeof v === 'number' && v >= -2147483648 && v <= 2147483647;
    s.format = int32(s.minimum ?? s.exclusiveMinimum) && int32(s.maximum ?? s.exclusiveMaximum) ? 'int32' : 'int64';
  }
  for (const value of Object.values(s)) if (value && typeof value === 'object') stateImpliedBounds(value);
}

/** The @fastify/swagger `transformObject` hook: completes the generated document in place. */
export function completeOpenApi(generated: Json): Json {
  // A copy: the route schemas the document was built from stay as the validator compiled them.
  const doc = structuredClone(generated);
  doc.tags = TAGS;
  // The one server is this instance, for its public audience (OWASP API9: inventory).
  for (const server of doc.servers ?? []) server['x-internal'] ??= false;
  doc.components ??= {};
  doc.components.headers = { ...RATE_LIMIT_HEADERS, 'Retry-After': RETRY_AFTER };
  const bearer = doc.components.securitySchemes?.bearerAuth;
  if (bearer) {
    doc.components.securitySchemes.adminBearerAuth = {
      ...bearer,
      description:
        'The access token of an ADMIN account (the same login; any other role gets 403). A JWT checked as RFC8725 advises.',
    };
  }
  const used = new Set<string>();
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    // Everything under /api counts against the per-IP limits (contract section 5); health does not.
    const limited = path === '/api' || path.startsWith('/api/');
    for (const method of METHODS) {
      const op: Json | undefined = item[method];
      if (!op) continue;
      op.operationId ??= operationIdFor(method, path);
      if (used.has(op.operationId)) op.operationId = operationIdFor(method, path);
      used.add(op.operationId);
      op.security ??= [];
      // Admin routes take an ADMIN's token: a scheme of their own says so (and OWASP API5 asks for it).
      if (path.startsWith('/api/admin/') && op.security.some((r: Json) => 'bearerAuth' in r))
        op.security = [{ adminBearerAuth: [] }];
      for (const p of [...(op.parameters ?? []), ...(item.parameters ?? [])]) stateImpliedBounds(p.schema);
      for (const media of Object.values<Json>(op.requestBody?.content ?? {})) stateImpliedBounds(media.schema);
      const secured = op.security.length > 0;
      const responses: Json = (op.responses ??= {});
      const statuses = new Set(Object.keys(responses));
      const hasInput =
        Boolean(op.requestBody) || (op.parameters ?? []).length > 0 || (item.parameters ?? []).length > 0;
      if (hasInput) statuses.add('400');
      if (secured) statuses.add('401');
      if (path.includes('{')) statuses.add('404');
      if (limited) statuses.add('429');
      statuses.add('500');
      for (const status of statuses) {
        if (/^[45]\d\d$/.test(status)) responses[status] = errorResponse(status, responses[status], limited);
        else if (limited && /^2\d\d$/.test(status)) {
          responses[status] = {
            ...responses[status],
            headers: { ...(responses[status].headers ?? {}), ...rateLimitHeaderRefs() },
          };
        }
      }
      for (const [status, response] of Object.entries<Json>(responses)) {
        if (!response.description || response.description === 'Default Response')
          response.description = describe(status, method);
      }
    }
  }
  return doc;
}

function describe(status: string, method: string): string {
  if (status === '200') return method === 'get' ? 'The requested resource' : 'Done: the resource as it is now';
  if (status === '201') return 'Created';
  if (status === '202') return 'Accepted: queued';
  if (status === '204') return 'Done, no content';
  return ERROR_DESCRIPTIONS[status] ?? 'Response';
}
