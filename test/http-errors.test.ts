// The error contract for request-level failures, on a route with a body schema.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { registerErrorHandling } from '../src/http/errors.js';
import { validatorCompiler } from '../src/http/validation.js';
import { AppError } from '../src/shared/errors.js';
import { Body, Location } from '../src/shared/schemas.js';

describe('error contract', () => {
  let app: FastifyInstance;
  before(async () => {
    app = Fastify({ bodyLimit: 1024 * 1024 });
    app.setValidatorCompiler(validatorCompiler);
    registerErrorHandling(app);
    app.post(
      '/things',
      {
        schema: {
          body: Body({
            name: Type.String({ minLength: 1 }),
            count: Type.Integer({ minimum: 1 }),
            where: Type.Optional(Location),
            kind: Type.Optional(Type.Union([Type.Literal('A'), Type.Literal('B')])),
          }),
          querystring: Type.Object({ limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) }),
        },
      },
      async (request) => ({ got: request.body, query: request.query }),
    );
    app.get('/conflict', async () => {
      throw new AppError(409, 'PACKAGE_STATUS_CONFLICT', 'Package is DELIVERED');
    });
    app.get('/boom', async () => {
      throw new Error('relation "secret_table" does not exist');
    });
    await app.ready();
  });
  after(() => app.close());

  const post = (payload: string, contentType = 'application/json') =>
    app.inject({ method: 'POST', url: '/things', payload, headers: { 'content-type': contentType } });

  test('a valid body passes, with query strings coerced', async () => {
    const res = await app.inject({ method: 'POST', url: '/things?limit=5', payload: { name: 'a', count: 2 } });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { got: { name: 'a', count: 2 }, query: { limit: 5 } });
  });

  test('malformed JSON is a 400', async () => {
    const res = await post('{"name": ');
    assert.deepEqual(res.json(), {
      statusCode: 400,
      message: 'Body is not valid JSON',
      error: 'Bad Request',
      code: 'INVALID_JSON',
    });
  });

  test('a wrong content type is a 415', async () => {
    const res = await post('name=a', 'application/x-www-form-urlencoded');
    assert.deepEqual(res.json(), {
      statusCode: 415,
      message: 'Content-Type must be application/json',
      error: 'Unsupported Media Type',
      code: 'UNSUPPORTED_MEDIA_TYPE',
    });
  });

  test('a body over 1 MiB is a 413', async () => {
    const res = await post(JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), count: 1 }));
    assert.deepEqual(res.json(), {
      statusCode: 413,
      message: 'Request body is larger than 1 MiB',
      error: 'Payload Too Large',
      code: 'PAYLOAD_TOO_LARGE',
    });
  });

  test('validation failures are readable 400s; unknown properties and type coercion are refused', async () => {
    const cases: [unknown, string][] = [
      [{ name: 'a', count: 1, role: 'ADMIN' }, 'body has an unknown property "role"'],
      [{ count: 1 }, 'body.name is required'],
      [{ name: 'a', count: '1' }, 'body.count must be integer'],
      [{ name: 'a', count: 1, where: { lat: 91, lng: 0 } }, 'body.where.lat must be <= 90'],
      [{ name: 'a', count: 1, kind: 'C' }, 'body.kind must be one of A, B'],
    ];
    for (const [payload, message] of cases) {
      const res = await post(JSON.stringify(payload));
      assert.equal(res.statusCode, 400);
      assert.deepEqual(res.json(), { statusCode: 400, message, error: 'Bad Request', code: 'VALIDATION_FAILED' });
    }
    const query = await app.inject({ method: 'POST', url: '/things?limit=500', payload: { name: 'a', count: 1 } });
    assert.equal(query.json().message, 'querystring.limit must be <= 100');
  });

  test('application errors keep their status and code; unexpected ones leak nothing', async () => {
    const conflict = await app.inject({ method: 'GET', url: '/conflict' });
    assert.deepEqual(conflict.json(), {
      statusCode: 409,
      message: 'Package is DELIVERED',
      error: 'Conflict',
      code: 'PACKAGE_STATUS_CONFLICT',
    });
    const boom = await app.inject({ method: 'GET', url: '/boom' });
    assert.equal(boom.statusCode, 500);
    assert.deepEqual(boom.json(), {
      statusCode: 500,
      message: 'Internal server error',
      error: 'Internal Server Error',
      code: 'INTERNAL',
    });
    assert.doesNotMatch(boom.body, /secret_table/);
  });
});
