// The web apps' API error handling (web/src/shared/api/), in Node: every API error is shown
// with the server's message, a 429 with its Retry-After in words.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ok } from '../web/src/shared/api/client.js';
import { ApiError, errorText, inWords } from '../web/src/shared/api/errors.js';

test('Retry-After in words', () => {
  assert.equal(inWords(1), '1 second');
  assert.equal(inWords(45), '45 seconds');
  assert.equal(inWords(60), '1 minute');
  assert.equal(inWords(170), '3 minutes');
  assert.equal(inWords(3600), '1 hour');
  assert.equal(inWords(5400), '2 hours');
});

test('errors show the API message; a 429 says when to try again', () => {
  assert.equal(errorText(new ApiError(404, 'Package not found', 'PACKAGE_NOT_FOUND')), 'Package not found');
  assert.equal(
    errorText(new ApiError(429, 'Too many requests; retry in 240 seconds', 'RATE_LIMITED', 240)),
    'Too many requests; retry in 4 minutes',
  );
  assert.equal(
    errorText(new ApiError(429, 'Too many failed sign-ins', 'LOCKED', 900)),
    'Too many failed sign-ins. Try again in 15 minutes.',
  );
  assert.match(errorText(new TypeError('fetch failed')), /could not be reached/);
});

test('an error body that openapi-fetch has read already still gives the message and the code', async () => {
  const body = {
    statusCode: 400,
    error: 'Bad Request',
    code: 'POINT_OUTSIDE_COUNTRY',
    message: 'The pickup and the dropoff must be in the country (KE)',
  };
  const response = new Response(JSON.stringify(body), {
    status: 400,
    statusText: 'Bad Request',
    headers: { 'content-type': 'application/json' },
  });
  // As openapi-fetch leaves it: the body consumed, its parsed JSON as `error`.
  const error: unknown = JSON.parse(await response.text());
  await assert.rejects(ok(Promise.resolve({ error, response })), (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.deepEqual([err.status, err.code, err.message], [400, 'POINT_OUTSIDE_COUNTRY', body.message]);
    return true;
  });
});
