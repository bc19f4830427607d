// Quote ids and where quotes are kept (contract sections 1 and 18): a quote id is a UUID; the quote is
// kept where every instance finds it (Redis when configured and reachable, else PostgreSQL, memory only
// on the embedded database alone) until at least QUOTE_TTL after it expired. Errors: unknown → 404,
// expired → 409, another account or points → 400, used twice → 409, not a UUID → 400.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { UUID_PATTERN } from '../src/shared/errors.js';
import { buildTestApp, deleteRedisKeys, redisSkipReason, type TestApp } from './helpers/app.js';
import { createTestDatabase, serverDatabaseUrl, testRedisUrl, type TestDatabase } from './helpers/database.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { RedisServer, redisServerSkipReason } from './helpers/redis-server.js';
import { packageBody, post, stop } from './packages-helpers.js';

const PICKUP = { lat: -1.2864, lng: 36.8172 };
const DROPOFF = { lat: -1.2421, lng: 36.8737 };
const TTL = 10 * 60_000;
// The clock runs ahead here (expiries): tokens outlive it. No dispatch: nothing but the quotes is under test.
const ENV = { ACCESS_TOKEN_TTL: '1d', DISPATCH_MODE: 'off' };

const quoteBody = (by: TestUser) => ({
  kind: 'PACKAGE',
  pickup: { location: PICKUP },
  dropoff: { location: DROPOFF },
  vehicleType: 'BIKE',
  countryId: by.countryId,
});
const jobBody = (by: TestUser, quoteId: string) =>
  packageBody(by.countryId, { pickup: stop(PICKUP.lat, PICKUP.lng), dropoff: stop(DROPOFF.lat, DROPOFF.lng), quoteId });
const error = (statusCode: number, code: string, message: string) => ({
  statusCode,
  error: { 400: 'Bad Request', 404: 'Not Found', 409: 'Conflict' }[statusCode],
  code,
  message,
});

async function quote(t: TestApp, by: TestUser): Promise<{ id: string; amount: number; expiresAt: string }> {
  const res = await post(t, '/api/quotes', by.headers, quoteBody(by));
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}
const createPackage = (t: TestApp, by: TestUser, quoteId: string) =>
  post(t, '/api/packages', by.headers, jobBody(by, quoteId));

async function unusedRows(t: TestApp, id: string): Promise<number> {
  const rows = await t.db
    .selectFrom('quotes')
    .select('id')
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .execute();
  return rows.length;
}

/**
 * The behaviour every store gives: `a` quotes, `b` (another instance on the same database, or `a`
 * itself on the embedded one) locks the price; the errors of section 18.
 */
function quoteLifecycle(setup: () => { a: TestApp; b: TestApp; business: TestUser; other: TestUser }) {
  test('a quote id is a UUID; another instance locks its price once', async () => {
    const { a, b, business } = setup();
    const q = await quote(a, business);
    assert.match(q.id, UUID_PATTERN);
    const res = await createPackage(b, business, q.id);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().price, { amount: q.amount, currency: 'KES' });
    const job = await b.db
      .selectFrom('packages')
      .select('quote_id')
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    assert.equal(job.quote_id, q.id);
    assert.deepEqual(
      (await createPackage(a, business, q.id)).json(),
      error(409, 'QUOTE_ALREADY_USED', 'The quote has already been used'),
    );
    // Upper case is the same UUID.
    assert.deepEqual(
      (await createPackage(b, business, q.id.toUpperCase())).json(),
      error(409, 'QUOTE_ALREADY_USED', 'The quote has already been used'),
    );
  });

  test('unknown UUID: 404 QUOTE_NOT_FOUND; not a UUID: 400; another account: 400 QUOTE_MISMATCH', async () => {
    const { a, b, business, other } = setup();
    assert.deepEqual(
      (await createPackage(b, business, randomUUID())).json(),
      error(404, 'QUOTE_NOT_FOUND', 'Quote not found'),
    );
    for (const quoteId of [
      'q1_' + randomBytes(300).toString('base64url'),
      'not-a-uuid',
      `urn:uuid:${randomUUID()}`,
      '',
    ]) {
      const res = await createPackage(b, business, quoteId);
      assert.equal(res.statusCode, 400, quoteId);
      assert.equal(res.json().code, 'VALIDATION_FAILED');
    }
    const q = await quote(a, business);
    assert.deepEqual(
      (await createPackage(b, other, q.id)).json(),
      error(400, 'QUOTE_MISMATCH', 'The quote is for another account'),
    );
    // The refusal used nothing up.
    assert.equal((await createPackage(b, business, q.id)).statusCode, 201);
  });

  test('expired: 409 QUOTE_EXPIRED, still so QUOTE_TTL after the expiry', async () => {
    const { a, b, business } = setup();
    const q = await quote(a, business);
    a.clock.advance(TTL);
    assert.deepEqual(
      (await createPackage(b, business, q.id)).json(),
      error(409, 'QUOTE_EXPIRED', 'The quote has expired: ask for a new one'),
    );
    a.clock.advance(TTL - 1000);
    // What would forget it if it were due: a new quote (memory), the purge (PostgreSQL).
    await quote(a, business);
    await a.services.pricing.deleteExpiredQuotes();
    assert.deepEqual(
      (await createPackage(b, business, q.id)).json(),
      error(409, 'QUOTE_EXPIRED', 'The quote has expired: ask for a new one'),
    );
  });
}

describe(`quotes on this run's database without Redis (${serverDatabaseUrl ? 'PostgreSQL server: kept in PostgreSQL, two instances' : 'embedded: kept in memory'})`, () => {
  let a: TestApp;
  let b: TestApp;
  let business: TestUser;
  let other: TestUser;

  before(async () => {
    a = await buildTestApp({ env: ENV });
    // On the embedded database there is one process: the second "instance" is the same one.
    b = serverDatabaseUrl ? await buildTestApp({ env: ENV, database: a.database, clock: a.clock }) : a;
    business = await createUser(a, { role: 'BUSINESS' });
    other = await createUser(a, { role: 'BUSINESS' });
  });
  after(async () => {
    if (b !== a) await b?.close();
    await a?.close();
  });

  test('the store: PostgreSQL on a server, memory on the embedded database', async () => {
    assert.equal(a.services.pricing.quoteStore.kind, serverDatabaseUrl ? 'database' : 'memory');
    const q = await quote(a, business);
    assert.equal(await unusedRows(a, q.id), serverDatabaseUrl ? 1 : 0);
  });

  quoteLifecycle(() => ({ a, b, business, other }));

  test('forgotten once QUOTE_TTL past its expiry: 404; a used quote stays known (its row)', async () => {
    const forgotten = await quote(a, business);
    const used = await quote(a, business);
    assert.equal((await createPackage(b, business, used.id)).statusCode, 201);
    a.clock.advance(2 * TTL + 1000);
    await quote(a, business);
    assert.ok((await a.services.pricing.deleteExpiredQuotes()) >= (serverDatabaseUrl ? 1 : 0));
    assert.equal(await unusedRows(a, forgotten.id), 0);
    assert.deepEqual(
      (await createPackage(b, business, forgotten.id)).json(),
      error(404, 'QUOTE_NOT_FOUND', 'Quote not found'),
    );
    assert.deepEqual(
      (await createPackage(b, business, used.id)).json(),
      error(409, 'QUOTE_EXPIRED', 'The quote has expired: ask for a new one'),
    );
  });
});

describe('quotes kept in Redis (two instances)', { skip: redisSkipReason }, () => {
  let a: TestApp;
  let b: TestApp;
  let business: TestUser;
  let other: TestUser;
  let redis: Redis;
  const prefix = `test:${randomBytes(6).toString('hex')}:`;

  before(async () => {
    a = await buildTestApp({ redis: true, redisKeyPrefix: prefix, env: ENV });
    b = await buildTestApp({ redis: true, redisKeyPrefix: prefix, env: ENV, database: a.database, clock: a.clock });
    business = await createUser(a, { role: 'BUSINESS' });
    other = await createUser(a, { role: 'BUSINESS' });
    redis = new Redis(testRedisUrl!);
  });
  after(async () => {
    redis?.disconnect();
    await b?.close();
    await a?.close();
    await deleteRedisKeys(prefix);
  });

  test('a quote is a key in Redis with an expiry of 2 × QUOTE_TTL, and no row until a job uses it', async () => {
    assert.equal(a.services.pricing.quoteStore.kind, 'redis');
    const q = await quote(a, business);
    const ttl = await redis.pttl(`${prefix}quote:${q.id}`);
    assert.ok(ttl > 2 * TTL - 60_000 && ttl <= 2 * TTL, String(ttl));
    assert.equal(await unusedRows(a, q.id), 0);
  });

  test('quotes given together (written in one pipeline) are each kept and usable', async () => {
    const quotes = await Promise.all(Array.from({ length: 20 }, () => quote(a, business)));
    assert.equal(new Set(quotes.map((q) => q.id)).size, 20);
    assert.equal(await redis.exists(...quotes.map((q) => `${prefix}quote:${q.id}`)), 20);
    for (const q of quotes) assert.equal((await createPackage(b, business, q.id)).json().price.amount, q.amount);
  });

  quoteLifecycle(() => ({ a, b, business, other }));
});

describe(
  'quotes while Redis is down (a redis-server of its own, two instances)',
  { skip: redisServerSkipReason },
  () => {
    let server: RedisServer;
    let database: TestDatabase;
    let a: TestApp;
    let b: TestApp;
    let business: TestUser;
    const prefix = 'test:quotes-faults:';

    before(async () => {
      server = await RedisServer.start();
      database = await createTestDatabase();
      const env = { ...ENV, REDIS_URL: server.url, REDIS_KEY_PREFIX: prefix };
      a = await buildTestApp({ database, env });
      b = await buildTestApp({ database, env, clock: a.clock });
      business = await createUser(a, { role: 'BUSINESS' });
    });
    after(async () => {
      await b?.close();
      await a?.close();
      await server?.close();
      await database?.close();
    });

    const redisUp = (t: TestApp) => t.deps.redisHealth!.up;
    async function until(what: string, check: () => boolean, limitMs = 10_000) {
      const started = performance.now();
      while (!check()) {
        if (performance.now() - started > limitMs) assert.fail(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }

    test('a quote given during the outage is kept in PostgreSQL and used after it from the other instance', async () => {
      const before = await quote(a, business);
      assert.equal(await unusedRows(a, before.id), 0, 'in Redis while it is up');

      await server.kill();
      // Not waiting for the heartbeat: the first writes find Redis away by themselves.
      const [during] = await Promise.all([quote(a, business), quote(a, business)]);
      await until('both instances to see Redis down', () => !redisUp(a) && !redisUp(b));
      const during2 = await quote(b, business);
      assert.equal(await unusedRows(a, during.id), 1);
      assert.equal(await unusedRows(a, during2.id), 1);
      // During the outage the other instance finds it in PostgreSQL; one kept in Redis is out of reach.
      assert.equal((await createPackage(a, business, during2.id)).statusCode, 201);
      assert.deepEqual(
        (await createPackage(b, business, before.id)).json(),
        error(404, 'QUOTE_NOT_FOUND', 'Quote not found'),
      );

      await server.start();
      await until('both instances to see Redis again', () => redisUp(a) && redisUp(b));
      // Frozen (the sockets stay open, nothing answers): quotes given together go to PostgreSQL once
      // their writes time out.
      server.freeze();
      const frozen = await Promise.all([quote(b, business), quote(b, business), quote(b, business)]);
      for (const q of frozen) assert.equal(await unusedRows(a, q.id), 1);
      server.thaw();
      await until('both instances to see Redis again', () => redisUp(a) && redisUp(b));
      assert.equal((await createPackage(a, business, frozen[0]!.id)).statusCode, 201);

      const res = await createPackage(b, business, during.id);
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(res.json().price, { amount: during.amount, currency: 'KES' });
      assert.deepEqual(
        (await createPackage(a, business, during.id)).json(),
        error(409, 'QUOTE_ALREADY_USED', 'The quote has already been used'),
      );
      // Back in Redis for new quotes.
      const after = await quote(b, business);
      assert.equal(await unusedRows(a, after.id), 0);
      assert.equal((await createPackage(a, business, after.id)).statusCode, 201);
    });
  },
);
