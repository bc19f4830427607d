import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { buildTestApp, redisSkipReason, type TestApp } from './helpers/app.js';

describe('foundation', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(async () => t.close());

  test('GET /api/countries lists the seeded countries', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/countries' });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    const codes = body.items.map((c: { code: string }) => c.code);
    for (const code of ['KE', 'NG', 'GH', 'UG', 'TZ', 'RW', 'ZA', 'EG', 'GB', 'US'])
      assert.ok(codes.includes(code), code);
    const kenya = body.items.find((c: { code: string }) => c.code === 'KE');
    assert.deepEqual(Object.keys(kenya).sort(), [
      'codMax',
      'code',
      'currency',
      'defaultLocale',
      'dialCode',
      'id',
      'minorUnits',
      'name',
      'timeZone',
    ]);
    assert.equal(kenya.minorUnits, 2);
    assert.equal(kenya.dialCode, '+254');
    assert.equal(kenya.currency, 'KES');
    assert.match(kenya.id, /^[0-9a-f-]{36}$/);
  });

  test('an unknown route is a 404 in the error shape', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/nope?x=1' });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), {
      statusCode: 404,
      message: 'Route GET /api/nope not found',
      error: 'Not Found',
      code: 'ROUTE_NOT_FOUND',
    });
  });

  test('a text/plain body is refused with 415, and logs carry the request id', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: 'identifier=a',
      headers: { 'content-type': 'text/plain', 'x-request-id': 'plain-1' },
    });
    assert.equal(res.statusCode, 415);
    assert.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE');
    assert.ok(t.logLines.some((line) => line.includes('"requestId":"plain-1"')));
  });

  test('one log line per request, when it completes, with the request, the status and the time', async () => {
    await t.app.inject({ method: 'GET', url: '/api/countries', headers: { 'x-request-id': 'one-line-1' } });
    const lines = t.logLines
      .filter((line) => line.includes('"requestId":"one-line-1"'))
      .map((line) => JSON.parse(line));
    assert.equal(lines.length, 1);
    assert.equal(lines[0].msg, 'request completed');
    assert.equal(lines[0].req.method, 'GET');
    assert.equal(lines[0].req.url, '/api/countries');
    assert.equal(lines[0].res.statusCode, 200);
    assert.equal(typeof lines[0].responseTime, 'number');
  });

  test('a request the client gives up on before it completes logs one "request aborted" line', async () => {
    const server = await buildTestApp();
    try {
      await server.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = server.app.server.address() as { port: number };
      // Half a body, then the client hangs up: the request never completes.
      const socket = connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nX-Request-Id: aborted-1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"identifier"',
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      socket.destroy();
      const lines = () =>
        server.logLines.filter((line) => line.includes('"requestId":"aborted-1"')).map((line) => JSON.parse(line).msg);
      for (let i = 0; i < 100 && lines().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(lines(), ['request aborted']);
    } finally {
      await server.close();
    }
  });

  test('every response carries X-Request-Id, taken from a sane request header', async () => {
    const generated = await t.app.inject({ method: 'GET', url: '/health' });
    assert.match(String(generated.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const given = await t.app.inject({ method: 'GET', url: '/api/countries', headers: { 'x-request-id': 'abc-123' } });
    assert.equal(given.headers['x-request-id'], 'abc-123');
    const insane = await t.app.inject({
      method: 'GET',
      url: '/api/countries',
      headers: { 'x-request-id': 'a b<script>' },
    });
    assert.notEqual(insane.headers['x-request-id'], 'a b<script>');
    const notFound = await t.app.inject({ method: 'GET', url: '/nothing', headers: { 'x-request-id': 'req-9' } });
    assert.equal(notFound.headers['x-request-id'], 'req-9');
  });

  test('health, readiness and metrics', async () => {
    const health = await t.app.inject({ method: 'GET', url: '/health' });
    assert.deepEqual(health.json(), { status: 'ok' });
    const ready = await t.app.inject({ method: 'GET', url: '/health/ready' });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), { status: 'ok', checks: { database: 'ok' } });
    const scrape = async () => (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const count = (body: string, labels: string) =>
      Number(new RegExp(`^http_requests_total\\{${labels}\\} (\\d+)$`, 'm').exec(body)?.[1] ?? 0);
    const countries = 'method="GET",route="/api/countries",status="200"';
    const before = await scrape();
    await t.app.inject({ method: 'GET', url: '/api/countries' });
    await t.app.inject({ method: 'GET', url: '/api/countries' });
    await t.app.inject({ method: 'GET', url: '/api/no-such-route' });
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(metrics.statusCode, 200);
    assert.match(metrics.headers['content-type'] as string, /text\/plain/);
    // Counted per route template and status: two more countries lists, an unknown route as `unmatched`.
    assert.equal(count(metrics.body, countries) - count(before, countries), 2);
    assert.equal(
      count(metrics.body, 'method="GET",route="unmatched",status="404"') -
        count(before, 'method="GET",route="unmatched",status="404"'),
      1,
    );
    assert.match(
      metrics.body,
      /^http_request_duration_seconds_count\{method="GET",route="\/api\/countries",status="200"\} [1-9]\d*$/m,
    );
    assert.match(metrics.body, /nodejs_eventloop_lag_seconds/);
  });

  test('the OpenAPI document is valid 3.1 and lists the routes; docs are served', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.equal(doc.openapi, '3.1.0');
    await SwaggerParser.validate(structuredClone(doc));
    assert.ok(doc.paths['/api/countries']);
    const docs = await t.app.inject({ method: 'GET', url: '/api/docs' });
    assert.ok([200, 302].includes(docs.statusCode));
    const page = await t.app.inject({ method: 'GET', url: '/api/docs/' });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /swagger/i);
  });
});

describe('readiness with Redis', { skip: redisSkipReason }, () => {
  test('reports the Redis check; Redis away leaves it 200 and degraded', async () => {
    const t = await buildTestApp({ redis: true });
    try {
      const ok = await t.app.inject({ method: 'GET', url: '/health/ready' });
      assert.equal(ok.statusCode, 200);
      assert.deepEqual(ok.json(), { status: 'ok', checks: { database: 'ok', redis: 'ok' } });
      t.deps.redis!.disconnect();
      let down = await t.app.inject({ method: 'GET', url: '/health/ready' });
      for (let i = 0; i < 100 && down.json().status === 'ok'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        down = await t.app.inject({ method: 'GET', url: '/health/ready' });
      }
      assert.equal(down.statusCode, 200);
      // The error text (hosts, users) stays in the log.
      assert.deepEqual(down.json(), { status: 'degraded', checks: { database: 'ok', redis: 'down' } });
    } finally {
      await t.close();
    }
  });
});
