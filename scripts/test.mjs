// `npm test`: every *.test.ts under src/ and test/, on Node's test runner (through tsx).
// TEST_DATABASE_URL / TEST_REDIS_URL switch the integration tests to those servers.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

function find(dir) {
  let out = [];
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) out = out.concat(find(full));
    else if (entry.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

const filter = process.argv.slice(2);
let files = [...find('src'), ...find('test')].sort();
if (filter.length) files = files.filter((f) => filter.some((p) => f.includes(p)));

console.log(`database: ${process.env.TEST_DATABASE_URL ? 'PostgreSQL server (TEST_DATABASE_URL)' : 'embedded PGlite'}`);
console.log(`redis: ${process.env.TEST_REDIS_URL ? 'Redis server (TEST_REDIS_URL)' : 'none: tests that need Redis are skipped (set TEST_REDIS_URL)'}`);
console.log(`${files.length} test files`);

const result = spawnSync(
  process.execPath,
  // --test-force-exit: a file whose tests have all ended is stopped even if a handle is left open
  // (once, on the embedded database, test/redis-cluster.test.ts finished every test and then never
  // exited, with its cluster already gone: CI waited on it for good).
  ['--import', 'tsx', '--test', '--test-force-exit', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 2}`, ...files],
  { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
);
process.exit(result.status ?? 1);
