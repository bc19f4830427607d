// ROUTER=graph through the API (contract section 25): /health/ready waits for the road graph, and
// quotes in a country that covers it are priced along its roads, the routing recorded with the price.
//
// Road network data: node_modules/geojson-path-finder/test/large-network.json (an extract of
// Gothenburg from the geojson-path-finder@2.1.0 package), © OpenStreetMap contributors, available
// under the Open Database License (ODbL) 1.0: https://www.openstreetmap.org/copyright
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, test } from 'node:test';
import { straightLeg } from '../src/modules/routing/router.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';

const NETWORK = createRequire(import.meta.url).resolve('geojson-path-finder/test/large-network.json');
// Two addresses in central Gothenburg, and a point in the Kattegat far from any road.
const CENTRAL_STATION = { lat: 57.7089, lng: 11.9733 };
const LINNEPLATSEN = { lat: 57.6905, lng: 11.9521 };
const KATTEGAT = { lat: 57.62, lng: 11.6 };

describe('ROUTER=graph through the API', () => {
  let t: TestApp;
  let dir: string;
  let fifo: string;
  let customer: TestUser;
  let se: string;

  before(async () => {
    // The graph is read from a named pipe: it loads only when the test writes the network into it.
    dir = mkdtempSync(path.join(tmpdir(), 'router-'));
    fifo = path.join(dir, 'network.geojson');
    execFileSync('mkfifo', [fifo]);
    t = await buildTestApp({ env: { ROUTER: 'graph', ROUTER_GRAPH: fifo } });
  });
  after(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('GET /health/ready answers 503 until the road graph is loaded, then 200', async () => {
    const loading = await t.app.inject({ method: 'GET', url: '/health/ready' });
    assert.equal(loading.statusCode, 503, loading.body);
    assert.deepEqual(loading.json(), { status: 'unavailable', checks: { database: 'ok', router: 'loading' } });
    assert.equal(t.services.router.ready, false);
    await pipeline(createReadStream(NETWORK), createWriteStream(fifo));
    await t.services.router.loaded;
    assert.equal(t.services.router.ready, true);
    const ready = await t.app.inject({ method: 'GET', url: '/health/ready' });
    assert.equal(ready.statusCode, 200, ready.body);
    assert.deepEqual(ready.json(), { status: 'ok', checks: { database: 'ok' } });
  });

  test('a quote in a country the network covers: along the roads, recorded as graph; off the roads: the straight estimate, recorded as the fallback', async () => {
    assert.equal(t.services.router.ready, true, 'the previous test loaded the graph');
    // No seeded country covers Gothenburg: an admin adds Sweden and its car tariff.
    const admin = await createUser(t, { role: 'ADMIN' });
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/admin/countries',
      headers: admin.headers,
      payload: { code: 'SE', name: 'Sweden', currency: 'SEK', dialCode: '+46' },
    });
    assert.equal(created.statusCode, 201, created.body);
    se = created.json().id;
    const tariff = await t.app.inject({
      method: 'PUT',
      url: `/api/admin/tariffs/${se}/CAR`,
      headers: admin.headers,
      payload: { base: 3_000, perKm: 1_200, perMinute: 300, minimum: 6_000, bookingFee: 500, cancellationFee: 4_000 },
    });
    assert.equal(tariff.statusCode, 200, tariff.body);
    customer = await createUser(t, { role: 'CUSTOMER', countryCode: 'SE' });

    const quote = (dropoff: { lat: number; lng: number }) =>
      t.app.inject({
        method: 'POST',
        url: '/api/quotes',
        headers: customer.headers,
        payload: {
          kind: 'PACKAGE',
          pickup: { location: CENTRAL_STATION },
          dropoff: { location: dropoff },
          vehicleType: 'CAR',
          countryId: se,
        },
      });
    const res = await quote(LINNEPLATSEN);
    assert.equal(res.statusCode, 201, res.body);
    const q = res.json();
    const road = await t.services.router.route(CENTRAL_STATION, LINNEPLATSEN, 'CAR');
    assert.equal(road.routing, 'graph');
    assert.equal(q.distanceMeters, road.distanceMeters);
    assert.equal(q.durationSeconds, road.durationSeconds);
    assert.notEqual(q.distanceMeters, straightLeg(CENTRAL_STATION, LINNEPLATSEN, 'CAR').distanceMeters);
    assert.equal((await t.services.pricing.quoteStore.get(q.id))!.routing, 'graph');

    const off = (await quote(KATTEGAT)).json();
    assert.equal(off.distanceMeters, straightLeg(CENTRAL_STATION, KATTEGAT, 'CAR').distanceMeters);
    assert.equal((await t.services.pricing.quoteStore.get(off.id))!.routing, 'great-circle×1.3 (graph fallback)');
    const metrics = await t.deps.metrics.registry.getSingleMetricAsString('router_fallbacks_total');
    assert.match(metrics, /router_fallbacks_total\{router="graph",reason="unroutable"\} 1/);
  });
});
