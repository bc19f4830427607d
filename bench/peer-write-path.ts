// The write path's peer (issue 41, B17): the same job steps written by hand, as lean as they can be,
// to measure ours beside. Fastify with no plugins and `pg`, on the project's own schema and data (the
// bench's database, seeded and migrated by the app's bench server), the same authentication work
// (the bearer token verified with fast-jwt, HS256, issuer and audience checked, verified tokens
// cached as the app caches them), and every step in ONE autocommitted statement: the guarded
// update, the history row (the trigger appends it to packages.status_history), the webhook outbox
// rows, the driver's claim or release, for delivery the ledger's transaction, entries, party balances
// and operator deltas (the split computed in SQL as postings.ts does), and the answer as JSON text.
// No Idempotency-Key, no validation of the body beyond what the SQL casts, no per-viewer fields but
// the driver's earnings: what is left is the floor of this work on this schema.
//
// Started by bench/b17-package-life.ts (fork, IPC): env PEER_DATABASE_URL, PEER_JWT_SECRET,
// PEER_JWT_ISSUER, PEER_JWT_AUDIENCE; sends { type: 'ready', port } and stops on { type: 'stop' }.
import { createVerifier } from 'fast-jwt';
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.PEER_DATABASE_URL, max: 10 });
const verify = createVerifier({
  key: process.env.PEER_JWT_SECRET!,
  algorithms: ['HS256'],
  allowedIss: process.env.PEER_JWT_ISSUER,
  allowedAud: process.env.PEER_JWT_AUDIENCE,
  requiredClaims: ['sub', 'exp', 'iat', 'jti', 'iss', 'aud'],
  cache: 10_000,
});

const iso = (c: string) => `to_char(${c} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const item = (status: string) =>
  `jsonb_build_array(jsonb_build_object('status', '${status}', 'at', ${iso('$3::timestamptz')}))`;

/** The package as the step answers it, from `m` (the moved row) and its driver. */
const answer = (status: string, earnings = 'null') => `
  select json_build_object('id', m.id, 'status', m.status, 'orderType', 'PACKAGE_DELIVERY', 'vehicleType', m.vehicle_type,
    'countryId', m.country_id, 'businessId', m.business_id, 'customerId', m.customer_id, 'reference', m.reference,
    'pickup', m.pickup, 'dropoff', m.dropoff, 'parcel', m.parcel,
    'driver', json_build_object('id', m.driver_id, 'firstName', du.first_name, 'phone', du.phone,
      'vehicleType', dp.vehicle_type, 'vehiclePlate', dp.vehicle_plate, 'rating', dp.rating, 'ratingCount', dp.rating_count),
    'statusHistory', m.status_history || ${item(status)},
    'price', case when m.price_amount is not null then json_build_object('amount', m.price_amount, 'currency', m.price_currency) end,
    'paymentMethod', m.payment_method, 'proofRequired', to_json(m.proof_required), 'proof', null,
    'createdAt', ${iso('m.created_at')}, 'updatedAt', ${iso('m.updated_at')}, 'timeZone', m.time_zone,
    'dispatch', json_build_object('state', 'DONE', 'attempts', 0), 'earnings', ${earnings})::text as body
  from moved m join users du on du.id = m.driver_id join driver_profiles dp on dp.user_id = m.driver_id`;

const history = (status: string) => `
  history as (insert into package_status_history (package_id, status, reason, actor_id, at)
    select id, '${status}', null, $2::uuid, $3::timestamptz from moved),
  outbox as (insert into webhook_deliveries (id, endpoint_id, event, delivery_id, payload, status, next_attempt_at, created_at)
    select gen_random_uuid(), e.id, $4::text, m.id::text,
      json_build_object('event', $4::text, 'deliveryId', m.id, 'status', '${status}', 'occurredAt', ${iso('$3::timestamptz')})::text,
      'PENDING', $3::timestamptz, $3::timestamptz
    from webhook_endpoints e join moved m on e.business_id = m.business_id
    where e.enabled and $4::text = any(e.events))`;

/** accept: PENDING and the driver free, ONLINE and fitting: the job and the driver's claim. */
const ACCEPT = `
  with moved as (update packages p set status = 'ASSIGNED', driver_id = $2::uuid, updated_at = $3::timestamptz
      where p.id = $1::uuid and p.status = 'PENDING'
        and exists (select 1 from driver_profiles d join users u on u.id = d.user_id where d.user_id = $2::uuid
          and d.active_job_id is null and d.availability = 'ONLINE' and d.vehicle_type = p.vehicle_type
          and 'PACKAGE_DELIVERY' = any(d.service_types) and u.status = 'ACTIVE')
      returning p.*),
    claimed as (update driver_profiles d set active_job_type = 'PACKAGE', active_job_id = m.id, updated_at = $3::timestamptz
      from moved m where d.user_id = $2::uuid),
    ${history('ASSIGNED')}
  ${answer('ASSIGNED')}`;

const move = (status: string, from: string) => `
  with moved as (update packages set status = '${status}', updated_at = $3::timestamptz
      where id = $1::uuid and driver_id = $2::uuid and status = '${from}' returning *),
    ${history(status)}
  ${answer(status)}`;

/**
 * deliver: the step, the driver freed, and the ledger in the same statement: the completion's
 * transaction (source key as the app's, booked once), its entries (JOB_CHARGE to the business or
 * CASH_COLLECTED from the driver, EARNINGS, COMMISSION, BOOKING_FEE; zero ones left out), the party
 * accounts' balances and the operator accounts' deltas. Accounts must exist (opened in the setup).
 */
const DELIVER = `
  with moved as (update packages set status = 'DELIVERED', updated_at = $3::timestamptz, finished_at = $3::timestamptz,
        recipient_name = $5::text
      where id = $1::uuid and driver_id = $2::uuid and status = 'IN_TRANSIT'
        and delivery_code_hash is null and cod_amount is null
      returning *),
    ${history('DELIVERED')},
    released as (update driver_profiles d set active_job_type = null, active_job_id = null, updated_at = $3::timestamptz
      from moved m where d.user_id = m.driver_id and d.active_job_id = m.id),
    facts as (select m.id, m.driver_id, coalesce(m.business_id, m.created_by) as payer, m.payment_method,
        m.price_amount::bigint as amount, m.price_currency as currency,
        least(coalesce((m.price_breakdown->>'bookingFee')::bigint, 0), m.price_amount) as fee, m.commission_rate::bigint as rate
      from moved m where m.price_amount is not null),
    split as (select f.*, (2 * (amount - fee) * rate + 10000) / 20000 as commission from facts f),
    tx as (insert into ledger_transactions (id, source_key, currency, memo, created_at)
      select gen_random_uuid(), 'job:PACKAGE:' || s.id || ':completed', s.currency, null, $3::timestamptz from split s
      returning id, currency),
    lines as (select x.party_id is not null as party, x.amount, x.code,
        case when x.party_id is not null
          then (select a.id from ledger_accounts a where a.party_id = x.party_id and a.currency = s.currency)
          else (select a.id from ledger_accounts a where a.party_id is null and a.kind = x.kind and a.currency = s.currency)
        end as account_id
      from split s cross join lateral (values
          (case when s.payment_method = 'CASH' then s.driver_id else s.payer end, null::text, -s.amount,
           case when s.payment_method = 'CASH' then 'CASH_COLLECTED' else 'JOB_CHARGE' end),
          (s.driver_id, null, s.amount - s.fee - s.commission, 'EARNINGS'),
          (null, 'OPERATOR_COMMISSION', s.commission, 'COMMISSION'),
          (null, 'OPERATOR_BOOKING_FEES', s.fee, 'BOOKING_FEE')) x(party_id, kind, amount, code)
      where x.amount <> 0),
    entries as (insert into ledger_entries (transaction_id, account_id, amount, code, created_at)
      select tx.id, l.account_id, l.amount, l.code, $3::timestamptz from tx cross join lines l),
    balances as (update ledger_accounts a set balance = a.balance + l.total, updated_at = $3::timestamptz
      from (select account_id, sum(amount) as total from lines where party group by account_id) l where a.id = l.account_id),
    deltas as (insert into ledger_balance_deltas (account_id, amount) select account_id, amount from lines where not party)
  ${answer(
    'DELIVERED',
    `(select json_build_object('driver', s.amount - s.fee - s.commission, 'commission', s.commission,
      'bookingFee', s.fee, 'tip', 0, 'currency', s.currency) from split s)`,
  )}`;

const STEPS: Record<string, { name: string; text: string; event: string }> = {
  accept: { name: 'peer_accept', text: ACCEPT, event: 'delivery.assigned' },
  pickup: { name: 'peer_pickup', text: move('PICKED_UP', 'ASSIGNED'), event: 'delivery.picked_up' },
  start: { name: 'peer_start', text: move('IN_TRANSIT', 'PICKED_UP'), event: 'delivery.in_transit' },
  deliver: { name: 'peer_deliver', text: DELIVER, event: 'delivery.delivered' },
};

const app = Fastify();
app.post<{ Params: { id: string; step: string }; Body: { recipientName?: string } | undefined }>(
  '/api/packages/:id/:step',
  async (request, reply) => {
    const header = request.headers.authorization;
    let userId: string;
    try {
      const claims = verify(header?.startsWith('Bearer ') ? header.slice(7) : '') as { sub: string; role: string };
      if (claims.role !== 'DRIVER') return reply.code(403).send({ statusCode: 403, code: 'ACTION_NOT_ALLOWED' });
      userId = claims.sub;
    } catch {
      return reply.code(401).send({ statusCode: 401, code: 'UNAUTHORIZED' });
    }
    const step = STEPS[request.params.step];
    if (!step) return reply.code(404).send({ statusCode: 404 });
    const values: unknown[] = [request.params.id, userId, new Date(), step.event];
    if (request.params.step === 'deliver') values.push(request.body?.recipientName ?? null);
    const { rows } = await pool.query<{ body: string }>({ name: step.name, text: step.text, values });
    if (!rows[0]) return reply.code(409).send({ statusCode: 409, code: 'INVALID_STATUS_TRANSITION' });
    return reply.type('application/json').send(rows[0].body);
  },
);

await app.listen({ port: 0, host: '127.0.0.1' });
process.on('message', async (m: { type: string }) => {
  if (m.type === 'stop') {
    await app.close();
    await pool.end();
    process.exit(0);
  }
});
process.send!({ type: 'ready', port: (app.server.address() as { port: number }).port, pid: process.pid });
