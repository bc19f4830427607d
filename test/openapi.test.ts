// The OpenAPI document as integrators and the web console's generated client depend on it
// (the linters' verdict is in CI: npm run lint:openapi).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { operationIdFor, patternMaxLength } from '../src/http/openapi.js';
import { generateWebTypes, SCHEMA_FILE } from '../scripts/web-types.js';
import { buildTestApp, type TestApp } from './helpers/app.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

describe('OpenAPI document', () => {
  let t: TestApp;
  let doc: any;
  before(async () => {
    t = await buildTestApp();
    doc = (await t.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  });
  after(async () => t.close());

  const operations = () =>
    Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })),
    );

  test('every operation has a unique operationId, a summary and declared tags', () => {
    const declared = new Set(doc.tags.map((tag: { name: string }) => tag.name));
    const ids = new Set<string>();
    for (const { path, method, op } of operations()) {
      const where = `${method} ${path}`;
      assert.match(op.operationId ?? '', /^[a-z][A-Za-z0-9]+$/, where);
      assert.ok(!ids.has(op.operationId), `${where}: duplicate operationId ${op.operationId}`);
      ids.add(op.operationId);
      assert.ok(op.summary, `${where}: summary`);
      assert.ok(op.tags?.length && op.tags.every((tag: string) => declared.has(tag)), `${where}: declared tags`);
    }
  });

  test('errors in the error schema; 429 with the rate-limit headers under /api; security stated everywhere', () => {
    for (const { path, method, op } of operations()) {
      const where = `${method} ${path}`;
      assert.ok(Array.isArray(op.security), `${where}: security (an empty list on a public route)`);
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (/^[45]/.test(status)) assert.ok(response.content['application/json'].schema, `${where} ${status}`);
      }
      if (!path.startsWith('/api/')) continue;
      const limited = op.responses['429'];
      assert.ok(limited, `${where}: 429`);
      for (const header of ['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'])
        assert.ok(limited.headers[header], `${where}: 429 ${header}`);
      if (op.security.length) assert.ok(op.responses['401'], `${where}: 401`);
    }
    assert.deepEqual(doc.paths['/api/auth/login'].post.security, []);
    assert.deepEqual(doc.paths['/api/countries'].get.security, []);
    assert.deepEqual(doc.paths['/api/admin/users'].get.security, [{ adminBearerAuth: [] }]);
  });

  test('request strings are bounded: maxLength (stated from a uuid or a fixed-size pattern where implied)', () => {
    const unbounded: string[] = [];
    const walk = (schema: any, where: string) => {
      if (!schema || typeof schema !== 'object') return;
      const types = [schema.type].flat();
      if (
        types.includes('string') &&
        schema.maxLength === undefined &&
        schema.enum === undefined &&
        schema.const === undefined
      )
        unbounded.push(where);
      for (const [key, value] of Object.entries(schema)) walk(value, `${where}.${key}`);
    };
    for (const { path, method, op } of operations()) {
      for (const p of op.parameters ?? []) walk(p.schema, `${method} ${path} ${p.name}`);
      walk(op.requestBody?.content?.['application/json']?.schema, `${method} ${path} body`);
    }
    assert.deepEqual(unbounded, []);
    assert.equal(patternMaxLength('^\\+[1-9][0-9]{6,14}$'), 16);
    assert.equal(patternMaxLength('^[0-9]{6}$'), 6);
    assert.equal(patternMaxLength('^[a-z]+$'), undefined);
    assert.equal(operationIdFor('post', '/api/packages/{id}/accept'), 'postPackagesIdAccept');
  });

  test("the web console's generated API types are those of this document", async () => {
    // A boolean, not assert.equal: the test runner's diff of two 16,000-line texts takes it many minutes.
    assert.ok(
      readFileSync(SCHEMA_FILE, 'utf8') === (await generateWebTypes()),
      'web/src/shared/api/schema.d.ts is out of date: run npm run web:types',
    );
  });
});
