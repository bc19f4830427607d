// GET /geocode (contract section 20) against a local server that answers as Nominatim does
// (/search?format=jsonv2) or as Photon does (/api): the country filter, validation, the cache,
// and clear 502/504 errors when the geocoder fails or is slow.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get } from './packages-helpers.js';

type Handler = (req: IncomingMessage, url: URL) => { status?: number; body?: unknown; raw?: string; delayMs?: number };

async function fakeGeocoder(handler: () => Handler) {
  const requests: URL[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    requests.push(url);
    const answer = handler()(req, url);
    setTimeout(() => {
      if (res.destroyed) return;
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
      res.end(answer.raw ?? JSON.stringify(answer.body ?? []));
    }, answer.delayMs ?? 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const NOMINATIM_ANSWER = [
  {
    place_id: 1,
    lat: '-1.2833',
    lon: '36.8167',
    display_name: 'Kenyatta Avenue, Nairobi, Kenya',
    name: 'Kenyatta Avenue',
    category: 'highway',
  },
  {
    place_id: 2,
    lat: '-4.0435',
    lon: '39.6682',
    display_name: 'Moi Avenue, Mombasa, Kenya',
    name: 'Moi Avenue',
    category: 'highway',
  },
];

describe('GET /geocode', () => {
  let t: TestApp;
  let off: TestApp;
  let slow: TestApp;
  let user: TestUser;
  let geocoder: Awaited<ReturnType<typeof fakeGeocoder>>;
  let handler: Handler = () => ({ body: NOMINATIM_ANSWER });

  before(async () => {
    geocoder = await fakeGeocoder(() => handler);
    t = await buildTestApp({ env: { GEOCODER_URL: geocoder.url, GEOCODER_TIMEOUT: '1s', GEOCODER_CACHE_TTL: '1m' } });
    off = await buildTestApp();
    user = await createUser(t, { role: 'CUSTOMER' });
  });
  after(async () => {
    await t.close();
    await off.close();
    await slow?.close();
    await geocoder.close();
  });

  const search = (q: string, countryId = user.countryId, app = t, headers = user.headers) =>
    get(app, `/api/geocode?q=${encodeURIComponent(q)}&countryId=${countryId}`, headers);

  test("answers [{ name, lat, lng }] from Nominatim, asking only for the country's places", async () => {
    const res = await search('Kenyatta Avenue');
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), [
      { name: 'Kenyatta Avenue, Nairobi, Kenya', lat: -1.2833, lng: 36.8167 },
      { name: 'Moi Avenue, Mombasa, Kenya', lat: -4.0435, lng: 39.6682 },
    ]);
    const asked = geocoder.requests.at(-1)!;
    assert.equal(asked.pathname, '/search');
    assert.equal(asked.searchParams.get('format'), 'jsonv2');
    assert.equal(asked.searchParams.get('countrycodes'), 'ke');
    assert.equal(asked.searchParams.get('q'), 'Kenyatta Avenue');
  });

  test('the same search again is answered from the cache', async () => {
    const before = geocoder.requests.length;
    assert.equal((await search('Tom Mboya Street')).statusCode, 200);
    assert.equal((await search('tom  mboya street')).statusCode, 200);
    assert.equal(geocoder.requests.length, before + 1);
  });

  test('signed-in users only; q of 2 to 200 characters; a known country', async () => {
    assert.equal((await search('Moi Avenue', user.countryId, t, {} as never)).statusCode, 401);
    for (const q of ['a', 'x'.repeat(201), 'bad\u0001text']) assert.equal((await search(q)).statusCode, 400, q);
    assert.equal((await get(t, `/api/geocode?q=Moi`, user.headers)).statusCode, 400);
    assert.equal((await get(t, `/api/geocode?q=Moi&countryId=nope`, user.headers)).statusCode, 400);
    assert.deepEqual((await search('Moi Avenue', randomUUID())).json(), {
      statusCode: 404,
      error: 'Not Found',
      code: 'COUNTRY_NOT_FOUND',
      message: 'Country not found',
    });
  });

  test('404 GEOCODER_NOT_CONFIGURED without GEOCODER_URL', async () => {
    const someone = await createUser(off, { role: 'BUSINESS' });
    const res = await search('Moi Avenue', someone.countryId, off, someone.headers);
    assert.deepEqual(res.json(), {
      statusCode: 404,
      error: 'Not Found',
      code: 'GEOCODER_NOT_CONFIGURED',
      message: 'Address search is not configured (GEOCODER_URL)',
    });
  });

  test('502 when the geocoder fails or answers nonsense, 504 when it is too slow', async () => {
    handler = () => ({ status: 500, raw: 'boom' });
    assert.deepEqual((await search('Failing Street')).json(), {
      statusCode: 502,
      error: 'Bad Gateway',
      code: 'GEOCODER_FAILED',
      message: 'The geocoder answered 500',
    });
    handler = () => ({ raw: '<html>' });
    assert.equal((await search('Html Street')).json().code, 'GEOCODER_FAILED');
    handler = () => ({ body: { not: 'a list' } });
    assert.equal((await search('Object Street')).json().code, 'GEOCODER_FAILED');
    handler = () => ({ body: NOMINATIM_ANSWER, delayMs: 4000 });
    const started = Date.now();
    assert.deepEqual((await search('Slow Street')).json(), {
      statusCode: 504,
      error: 'Gateway Timeout',
      code: 'GEOCODER_TIMEOUT',
      message: 'The geocoder did not answer in time',
    });
    assert.ok(Date.now() - started < 3500, 'gave up at GEOCODER_TIMEOUT');
    // A failure is not cached.
    handler = () => ({ body: NOMINATIM_ANSWER });
    assert.equal((await search('Failing Street')).statusCode, 200);
  });

  test('502 when nothing listens at GEOCODER_URL', async () => {
    slow = await buildTestApp({ env: { GEOCODER_URL: 'http://127.0.0.1:9', GEOCODER_TIMEOUT: '2s' } });
    const someone = await createUser(slow, { role: 'CUSTOMER' });
    assert.deepEqual((await search('Moi Avenue', someone.countryId, slow, someone.headers)).json(), {
      statusCode: 502,
      error: 'Bad Gateway',
      code: 'GEOCODER_FAILED',
      message: 'The geocoder could not be reached',
    });
  });

  test('a Photon-compatible geocoder: only the features of the country', async () => {
    const photon = await fakeGeocoder(() => () => ({
      body: {
        type: 'FeatureCollection',
        features: [
          {
            type: 'Feature',
            geometry: { type: 'Point', coordinates: [36.8167, -1.2833] },
            properties: { name: 'Kenyatta Avenue', city: 'Nairobi', country: 'Kenya', countrycode: 'KE' },
          },
          {
            type: 'Feature',
            geometry: { type: 'Point', coordinates: [32.58, 0.31] },
            properties: { name: 'Kampala Road', city: 'Kampala', country: 'Uganda', countrycode: 'UG' },
          },
        ],
      },
    }));
    const app = await buildTestApp({ env: { GEOCODER_URL: photon.url, GEOCODER_KIND: 'photon' } });
    try {
      const someone = await createUser(app, { role: 'CUSTOMER' });
      const res = await search('Avenue', someone.countryId, app, someone.headers);
      assert.deepEqual(res.json(), [{ name: 'Kenyatta Avenue, Nairobi, Kenya', lat: -1.2833, lng: 36.8167 }]);
      assert.equal(photon.requests.at(-1)!.pathname, '/api');
    } finally {
      await app.close();
      await photon.close();
    }
  });
});

describe('GEOCODER_URL with a path and a query (a provider key)', () => {
  test("keeps the base URL's path and query; the key is never logged", async () => {
    const geocoder = await fakeGeocoder(() => () => ({ body: NOMINATIM_ANSWER }));
    const app = await buildTestApp({
      env: { GEOCODER_URL: `${geocoder.url}/nominatim/?key=SeCrEt-K3y/x`, LOG_LEVEL: 'debug' },
    });
    try {
      const someone = await createUser(app, { role: 'CUSTOMER' });
      const res = await get(app, `/api/geocode?q=Kenyatta&countryId=${someone.countryId}`, someone.headers);
      assert.equal(res.statusCode, 200, res.body);
      const asked = geocoder.requests.at(-1)!;
      assert.equal(asked.pathname, '/nominatim/search');
      assert.equal(asked.searchParams.get('key'), 'SeCrEt-K3y/x');
      assert.equal(asked.searchParams.get('q'), 'Kenyatta');
      assert.equal(asked.searchParams.get('countrycodes'), 'ke');
      assert.ok(!app.logLines.some((line) => line.includes('SeCrEt')), 'the key is not in the log');
    } finally {
      await app.close();
      await geocoder.close();
    }
  });

  test('Photon: <path>/api with the query kept', async () => {
    const photon = await fakeGeocoder(() => () => ({ body: { type: 'FeatureCollection', features: [] } }));
    const app = await buildTestApp({ env: { GEOCODER_URL: `${photon.url}/photon?apikey=K`, GEOCODER_KIND: 'photon' } });
    try {
      const someone = await createUser(app, { role: 'CUSTOMER' });
      assert.equal(
        (await get(app, `/api/geocode?q=Avenue&countryId=${someone.countryId}`, someone.headers)).statusCode,
        200,
      );
      const asked = photon.requests.at(-1)!;
      assert.equal(asked.pathname, '/photon/api');
      assert.equal(asked.searchParams.get('apikey'), 'K');
      assert.equal(asked.searchParams.get('q'), 'Avenue');
    } finally {
      await app.close();
      await photon.close();
    }
  });

  test('an answer over 1 MB: 502 GEOCODER_FAILED, read no further', async () => {
    const huge = `[${Array.from({ length: 20_000 }, () => JSON.stringify(NOMINATIM_ANSWER[0])).join(',')}]`;
    assert.ok(huge.length > 1024 * 1024);
    const geocoder = await fakeGeocoder(() => () => ({ raw: huge }));
    const app = await buildTestApp({ env: { GEOCODER_URL: geocoder.url } });
    try {
      const someone = await createUser(app, { role: 'CUSTOMER' });
      const res = await get(app, `/api/geocode?q=Huge&countryId=${someone.countryId}`, someone.headers);
      assert.deepEqual(res.json(), {
        statusCode: 502,
        error: 'Bad Gateway',
        code: 'GEOCODER_FAILED',
        message: 'The geocoder answered more than 1 MB',
      });
    } finally {
      await app.close();
      await geocoder.close();
    }
  });
});
