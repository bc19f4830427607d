// Secrets in URLs (contract sections 12 and 14): access tokens and tracking tokens are redacted from the
// log however the URL encodes them, while the requests they are in still work; the access_token query
// parameter is taken by the event streams and the driver WebSocket only.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { loggedUrl } from '../src/http/request-logger.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser, type TestUser } from './helpers/factories.js';
import { get, packageBody, post } from './packages-helpers.js';

/** Percent-decoded until nothing changes, byte by byte (what a reader of the log could undo). */
function decodeAll(text: string): string {
  let out = text;
  for (let i = 0; i < 5; i += 1)
    out = out.replace(/\+/g, ' ').replace(/%([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  return out;
}

/** Whether any 12 characters of the secret appear in the line, as written or decoded. */
function leaks(line: string, secret: string): boolean {
  const forms = [line, decodeAll(line), decodeAll(line.replace(/\\u00([0-9a-f]{2})/gi, '%$1'))];
  for (let i = 0; i + 12 <= secret.length; i += 1) {
    const window = secret.slice(i, i + 12);
    if (forms.some((f) => f.includes(window))) return true;
  }
  return false;
}

/** Every character as %XX: the same token in another encoding. */
const encodeAll = (text: string) =>
  [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');

/** A request written on a raw socket (a fragment is sent as it is); the status line's code. */
function rawStatus(port: number, target: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`),
    );
    let head = '';
    socket.on('data', (chunk) => {
      head += chunk.toString('latin1');
      const match = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (match) {
        socket.destroy();
        resolve(Number(match[1]));
      }
    });
    socket.on('error', reject);
  });
}

describe('secrets in URLs', () => {
  let t: TestApp;
  let base: string;
  let port: number;
  let business: TestUser;

  before(async () => {
    t = await buildTestApp({ env: { DISPATCH_MODE: 'off' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as { port: number }).port;
    base = `http://127.0.0.1:${port}`;
    business = await createUser(t, { role: 'BUSINESS' });
  });
  after(async () => t.close());

  /** Opens a stream, reads its headers, closes it: the status. */
  const streamStatus = async (path: string, headers: Record<string, string> = {}) => {
    const abort = new AbortController();
    const res = await fetch(`${base}${path}`, {
      headers: { accept: 'text/event-stream', ...headers },
      signal: abort.signal,
    });
    const status = res.status;
    if (status === 200) abort.abort();
    else await res.text();
    return status;
  };

  test('tokens in any encoding work where they are taken and never reach the log', async () => {
    const admin = await createUser(t, { role: 'ADMIN' });
    const driver = await createUser(t, { role: 'DRIVER', driver: { availability: 'ONLINE' } });
    const pkg = (await post(t, '/api/packages', business.headers, packageBody(business.countryId))).json();
    const tracking = pkg.trackingUrl.split('/t/')[1] as string;
    const access = business.token;
    const first = t.logLines.length;

    // Access tokens in the query of the event streams: the key or the value encoded, a fragment
    // instead of a query (the router splits there too).
    for (const query of [
      `access%5Ftoken=${access}`,
      `%61ccess_token=${access}`,
      `access_token=${encodeAll(access)}`,
      `access_token=${access}`,
    ]) {
      assert.equal(await streamStatus(`/api/events/stream?${query}`), 200, query);
      assert.equal(await streamStatus(`/api/packages/${pkg.id}/track?${query}`), 200, query);
    }
    assert.equal(await rawStatus(port, `/api/events/stream#access_token=${access}`), 200);
    assert.equal(
      await streamStatus(`/api/admin/drivers/live/stream?bbox=36,-2,37,-1&access%5Ftoken=${admin.token}`),
      200,
    );
    // Not taken (double encoding, another case), and not logged either.
    assert.equal(await streamStatus(`/api/events/stream?access%255Ftoken=${access}`), 401);
    assert.equal(await streamStatus(`/api/events/stream?ACCESS_TOKEN=${access}`), 401);

    // Tracking tokens in the path: the API's routes and the console's page, the token or the route encoded.
    const encodedToken = encodeAll(tracking.slice(0, 8)) + tracking.slice(8);
    for (const path of [
      `/api/tracking/${tracking}`,
      `/api/%74racking/${tracking}`,
      `/api/tracking/${encodedToken}`,
      `/api/%74%72%61%63%6b%69%6e%67/${encodeAll(tracking)}`,
    ]) {
      assert.equal((await fetch(`${base}${path}`)).status, 200, path);
    }
    for (const path of [
      `/api/tracking/${tracking}/stream`,
      `/api/%74racking/${tracking}/stream`,
      `/api/tracking/${encodedToken}/stream`,
    ]) {
      assert.equal(await streamStatus(path), 200, path);
    }
    // The console serves its page for any path outside /api (503 here: no console is built for tests).
    const page = (await fetch(`${base}/t/${tracking}`)).status;
    for (const path of [`/%74/${tracking}`, `/T/${tracking}`, `/%54/${encodeAll(tracking)}`, `/t/${tracking}?x=1`]) {
      assert.equal((await fetch(`${base}${path}`)).status, page, path);
    }
    assert.equal((await fetch(`${base}/api/tracking/${tracking}/nothing`)).status, 404);

    // The driver WebSocket, its access_token encoded.
    const ws = new WebSocket(`${base.replace('http', 'ws')}/api/drivers/me/stream?access%5Ftoken=${driver.token}`);
    await new Promise<void>((resolve, reject) => {
      ws.on('open', () => resolve());
      ws.on('error', reject);
    });
    ws.close();
    await new Promise((resolve) => ws.on('close', resolve));
    // A request's line is written after its answer went out (onResponse), a stream's when the server
    // sees the client go: on a loaded machine some come after the client is done. Read once no line
    // has come for 2 s (at most 15 s), so that late lines are checked for leaks too.
    for (
      let seen = -1, quietSince = Date.now(), start = Date.now();
      Date.now() - quietSince < 2000 && Date.now() - start < 15_000;
    ) {
      if (t.logLines.length !== seen) [seen, quietSince] = [t.logLines.length, Date.now()];
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const lines = t.logLines.slice(first);
    for (const [name, secret] of [
      ['tracking token', tracking],
      ['access token', access],
      ['admin token', admin.token],
      ['driver token', driver.token],
    ] as const) {
      const leaked = lines.filter((l) => leaks(l, secret));
      assert.deepEqual(leaked, [], `the ${name} is in the log`);
    }
    // Every request was logged all the same (its line is there).
    // About 30 requests; a client-aborted stream's line may still be missing on a loaded machine.
    assert.ok(lines.length >= 25, `${lines.length} lines`);
    assert.ok(lines.some((l) => l.includes(`"url":"/api/%74racking/[redacted]"`)));
    assert.ok(lines.some((l) => l.includes(`"url":"/api/events/stream?access%5Ftoken=[redacted]"`)));
    assert.ok(lines.some((l) => l.includes('driver socket opened') && l.includes('access%5Ftoken=[redacted]')));
  });

  test('the logged URL keeps what is not a secret', () => {
    const id = '0b3f7a52-7e1c-4c43-9a0e-5f2f8f1e8a11';
    for (const [url, route, logged] of [
      [
        `/api/packages/${id}/tracking/rotate`,
        '/api/packages/:id/tracking/rotate',
        `/api/packages/${id}/tracking/rotate`,
      ],
      [
        '/api/admin/drivers/live?bbox=36%2C-2,37,-1',
        '/api/admin/drivers/live',
        '/api/admin/drivers/live?bbox=36%2C-2,37,-1',
      ],
      ['/api/tracking/abc%2Fdef/stream?x=1', '/api/tracking/:token/stream', '/api/tracking/[redacted]/stream?x=1'],
      [
        '/api/events/stream?a=1&access_token=x.y.z&b=2',
        '/api/events/stream',
        '/api/events/stream?a=1&access_token=[redacted]&b=2',
      ],
      ['/api/events/stream?a=1%26access_token%3Dxyz', '/api/events/stream', '/api/events/stream?a=[redacted]'],
      ['/api/events/stream?x%3Daccess_token%3Dxyz=1', '/api/events/stream', '/api/events/stream?[redacted]'],
      ['/api/nothing/t', undefined, '/api/nothing/t'],
      ['/t/abc?lang=en', undefined, '/t/[redacted]?lang=en'],
      ['/x/%74%2Fabc/more', undefined, '/x/[redacted]/more'],
      ['/x//tracking//abc', undefined, '/x//tracking//[redacted]'],
    ] as const) {
      assert.equal(loggedUrl(url, route), logged, url);
    }
  });

  test('access_token is taken by the event streams only: a JSON route needs the Authorization header', async () => {
    const admin = await createUser(t, { role: 'ADMIN' });
    const company = await createUser(t, { role: 'COMPANY' });
    const missing = { statusCode: 401, message: 'Missing bearer token', error: 'Unauthorized', code: 'MISSING_TOKEN' };
    for (const [user, path] of [
      [admin, '/api/admin/drivers/live?bbox=36,-2,37,-1'],
      [company, '/api/companies/me/drivers/live'],
      [business, '/api/packages'],
      [business, '/api/auth/me'],
      [admin, '/api/admin/users'],
    ] as const) {
      const url = `${path}${path.includes('?') ? '&' : '?'}access_token=${user.token}`;
      const res = await t.app.inject({ url });
      assert.equal(res.statusCode, 401, path);
      assert.deepEqual(res.json(), missing, path);
      // With the header it works; the parameter is no part of the route, said as for any other.
      assert.equal((await get(t, path, user.headers)).statusCode, 200, path);
    }
    for (const [user, path] of [
      [admin, '/api/admin/drivers/live?bbox=36,-2,37,-1'],
      [company, '/api/companies/me/drivers/live'],
    ] as const) {
      const res = await get(t, `${path}${path.includes('?') ? '&' : '?'}access_token=${user.token}`, user.headers);
      assert.equal(res.statusCode, 400, path);
      assert.equal(res.json().code, 'VALIDATION_FAILED');
    }
    // The OpenAPI document offers access_token on the stream routes and on no other.
    const doc = (await t.app.inject({ url: '/api/openapi.json' })).json() as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    const offering = Object.entries(doc.paths)
      .flatMap(([path, ops]) =>
        Object.entries(ops).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op.parameters ?? []] as const),
      )
      .filter(([, params]) => params.some((p) => p.in === 'query' && p.name === 'access_token'))
      .map(([op]) => op)
      .sort();
    assert.deepEqual(offering, [
      'GET /api/admin/drivers/live/stream',
      'GET /api/companies/me/drivers/live/stream',
      'GET /api/events/stream',
      'GET /api/packages/{id}/track',
      'GET /api/rides/{id}/track',
    ]);
  });
});
