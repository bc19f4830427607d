// CLOCK_RATE (contract section 22): tests and the simulator only; the injected clock runs faster.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';
import { clockRate, scaledClock, systemClock } from '../src/shared/clock.js';

test('CLOCK_RATE is refused in production, bounded, and 1 by default', () => {
  assert.equal(loadConfig({}).scheduling.clockRate, 1);
  assert.equal(loadConfig({ CLOCK_RATE: '60' }).scheduling.clockRate, 60);
  assert.throws(
    () => loadConfig({ NODE_ENV: 'production', CLOCK_RATE: '60', JWT_SECRET: 'x'.repeat(64) }),
    (err: unknown) =>
      err instanceof ConfigError &&
      err.problems.some((p) => p.startsWith('CLOCK_RATE is for tests and the simulator only')),
  );
  for (const bad of ['0', 'fast', '20000'])
    assert.throws(
      () => loadConfig({ CLOCK_RATE: bad }),
      (err: unknown) => err instanceof ConfigError,
    );
  assert.throws(
    () => loadConfig({ CLOCK_ANCHOR: 'yesterday' }),
    (err: unknown) => err instanceof ConfigError,
  );
});

test('a scaled clock runs `rate` times faster from its anchor; two with one anchor tell the same time', async () => {
  const anchor = Date.now();
  const a = scaledClock(100, anchor);
  const b = scaledClock(100, anchor);
  const real0 = Date.now();
  const sim0 = a.nowMs();
  await new Promise((r) => setTimeout(r, 200));
  const realElapsed = Date.now() - real0;
  const simElapsed = a.nowMs() - sim0;
  assert.ok(
    simElapsed >= realElapsed * 100 - 200 && simElapsed <= (realElapsed + 5) * 100,
    `${simElapsed} vs ${realElapsed}`,
  );
  assert.ok(Math.abs(a.nowMs() - b.nowMs()) < 500);
  assert.equal(clockRate(a), 100);
  assert.equal(clockRate(systemClock), 1);
});
