// The configured router in the job paths (contract section 25), with ROUTER=osrm against a stand-in:
// a package's price records the router's distance and name; its offer carries the driver's ETA and
// distance by road, while the candidate was chosen (and is logged) by the straight estimate.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { onlineDriver, wsBase } from './dispatch-helpers.js';
import { SseClient } from './helpers/sse-client.js';
import { get, packageBody, post, stop } from './packages-helpers.js';

// Every route the stand-in answers: 2,345.4 m in 321.4 s (a car's time).
const ROUTE = { distance: 2345.4, duration: 321.4 };

describe('ROUTER=osrm in prices and offers', () => {
  let t: TestApp;
  let server: Server;
  let business: TestUser;
  let admin: TestUser;
  const seen: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      seen.push(req.url!);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'Ok', routes: [ROUTE], waypoints: [] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await buildTestApp({ env: { ROUTER: 'osrm', ROUTER_URL: url } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    business = await createUser(t, { role: 'BUSINESS' });
    admin = await createUser(t, { role: 'ADMIN' });
  });
  after(async () => {
    await t?.close();
    server?.close();
  });

  test("a package's price comes from the router; its offer's ETA and distance too, the ranking from the straight estimate", async () => {
    const at = { lat: -1.2, lng: 36.8 };
    const driver = await onlineDriver(t, wsBase(t), at.lat + 0.004, at.lng);
    const res = await post(
      t,
      '/api/packages',
      business.headers,
      packageBody(business.countryId, { pickup: stop(at.lat, at.lng), dropoff: stop(at.lat + 0.02, at.lng + 0.01) }),
    );
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    const row = (
      await sql<{ price_inputs: { routing: string; distanceMeters: number; durationSeconds: number } }>`
        select price_inputs from packages where id = ${created.id}`.execute(t.db)
    ).rows[0]!;
    assert.equal(row.price_inputs.routing, 'osrm');
    assert.equal(row.price_inputs.distanceMeters, 2345);
    // The package's vehicle type (BIKE): the car's time × 1.2.
    assert.equal(row.price_inputs.durationSeconds, Math.round(321.4 * 1.2));

    const offer = (await driver.socket.next(['offer'])).offer;
    assert.equal(offer.jobId, created.id);
    assert.equal(offer.distanceMeters, 2345);
    assert.equal(offer.etaSeconds, Math.round(321.4 * 1.2));
    assert.ok(
      seen.some((u) => u.startsWith('/route/v1/driving/36.800000,-1.196000;36.800000,-1.200000')),
      seen.join(),
    );
    // The log's "why" is the ranking's: the straight line at the average speed (445 m, no detour factor).
    const log = (await get(t, `/api/admin/dispatch/${created.id}`, admin.headers)).json();
    const why = log.offers[0].why;
    assert.ok(Math.abs(why.distanceMeters - 445) < 5, JSON.stringify(why));
    assert.equal(why.etaSeconds, Math.round(why.distanceMeters / (25 / 3.6)));

    // Tracking: once the driver accepts, the stream's ETA to the pickup is the router's too.
    assert.equal((await post(t, `/api/offers/${offer.id}/accept`, driver.user.headers)).statusCode, 200);
    const address = t.app.server.address() as AddressInfo;
    const stream = await SseClient.open(
      `http://127.0.0.1:${address.port}/api/packages/${created.id}/track?access_token=${business.token}`,
    );
    try {
      t.clock.advance(10);
      const moved = await post(t, '/api/drivers/me/location', driver.user.headers, {
        lat: at.lat + 0.003,
        lng: at.lng,
      });
      assert.equal(moved.statusCode, 204, moved.body);
      await stream.until((c) => c.of('eta').length >= 1);
      assert.deepEqual(stream.json('eta').at(-1), { etaSeconds: Math.round(321.4 * 1.2), to: 'PICKUP' });
    } finally {
      stream.close();
      driver.socket.close();
    }
  });
});
