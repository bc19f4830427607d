// The session cache behind every authenticated request: entries read again in the background after
// 60–90 s (each at its own time, so sessions read together are not read again together), a revocation
// the bus never announced seen after that read, and a read overtaken by an invalidation not cached.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from 'kysely';
import { AuthGuard } from '../src/http/authenticate.js';
import { SessionStateRepository } from '../src/http/session-state.repository.js';
import { AppError } from '../src/shared/errors.js';
import { buildTestApp, type TestApp } from './helpers/app.js';
import { createUser } from './helpers/factories.js';

/** Counts the session reads and can hold their answers back. */
class SessionReads implements KyselyPlugin {
  count = 0;
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  private readonly ours = new Set<PluginTransformQueryArgs['queryId']>();

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open?.();
    this.gate = undefined;
  }
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (node.kind === 'SelectQueryNode' && JSON.stringify(node.from).includes('auth_sessions')) {
      this.count += 1;
      this.ours.add(args.queryId);
    }
    return node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.ours.delete(args.queryId) && this.gate) await this.gate;
    return args.result;
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('session cache', () => {
  let t: TestApp;
  let now = 0;
  let reads: SessionReads;
  let guard: AuthGuard;

  before(async () => {
    t = await buildTestApp();
    reads = new SessionReads();
    guard = new AuthGuard({
      sessions: new SessionStateRepository(t.db.withPlugin(reads)),
      bus: t.deps.bus,
      tokens: t.tokens,
      now: () => now,
    });
  });
  after(async () => t.close());

  const revokedError = (err: unknown) =>
    err instanceof AppError && err.statusCode === 401 && err.code === 'SESSION_REVOKED';

  test('a revocation the bus did not announce is seen after the background read; the request that starts it does not wait', async () => {
    const user = await createUser(t);
    await guard.authenticateToken(user.token);
    const before = reads.count;
    await t.db.updateTable('auth_sessions').set({ revoked_at: new Date() }).where('id', '=', user.sessionId).execute();
    now += 45_000;
    await guard.authenticateToken(user.token);
    assert.equal(reads.count, before, 'younger than 60 s: served from the cache');
    now += 46_000;
    reads.hold();
    // The entry is 91 s old: this request is answered from it at once, and it is read again behind.
    const auth = await guard.authenticateToken(user.token);
    assert.equal(auth.userId, user.id);
    assert.equal(reads.count, before + 1);
    await guard.authenticateToken(user.token);
    assert.equal(reads.count, before + 1, 'one background read per session at a time');
    reads.release();
    await settle();
    await assert.rejects(guard.authenticateToken(user.token), revokedError);
  });

  test('sessions read together are read again at different times (60–90 s)', async () => {
    const users = await Promise.all(Array.from({ length: 60 }, () => createUser(t)));
    for (const u of users) await guard.authenticateToken(u.token);
    const before = reads.count;
    now += 75_000;
    for (const u of users) await guard.authenticateToken(u.token);
    await settle();
    const first = reads.count - before;
    assert.ok(first > 5 && first < 55, `about half are due at 75 s: ${first} of 60`);
    now += 15_001;
    for (const u of users) await guard.authenticateToken(u.token);
    await settle();
    assert.equal(reads.count - before, 60, 'by 90 s every one has been read again, once');
  });

  test('an entry 3 minutes old (no request refreshed it) is read by the request itself', async () => {
    const user = await createUser(t);
    await guard.authenticateToken(user.token);
    const before = reads.count;
    now += 181_000;
    await guard.authenticateToken(user.token);
    assert.equal(reads.count, before + 1, 'read in the request');
  });

  test('a read that an invalidation overtook is used by its request but not cached', async () => {
    const user = await createUser(t);
    const before = reads.count;
    reads.hold();
    const pending = guard.authenticateToken(user.token);
    await settle();
    // The session is revoked (and announced) while the read is on its way back.
    t.deps.bus.publish('session.revoked', { sessionId: user.sessionId });
    reads.release();
    assert.equal((await pending).userId, user.id, 'the request that read before the revocation');
    await guard.authenticateToken(user.token);
    assert.equal(reads.count, before + 2, 'the next request reads the session again');
    await guard.authenticateToken(user.token);
    assert.equal(reads.count, before + 2, 'and that read is cached');
  });
});
