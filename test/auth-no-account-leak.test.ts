// Section 4: for an account that does not exist, every step of the password reset and the login
// lockout answers exactly as for one that does (status, code, message, headers that matter).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createUser, TEST_PASSWORD, uniquePhone } from './helpers/factories.js';
import { buildSmsTestApp, wrongCode, type SmsTestApp } from './auth-support.js';

describe('nothing tells whether an account exists', () => {
  let t: SmsTestApp;
  before(async () => {
    t = await buildSmsTestApp();
  });
  after(() => t.close());

  const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url: `/api${url}`, payload });
  const shape = (res: Awaited<ReturnType<typeof post>>) => {
    const body = res.json() as Record<string, unknown>;
    return {
      status: res.statusCode,
      code: body.code,
      message: body.message,
      error: body.error,
      retryAfter: res.headers['retry-after'],
    };
  };

  for (const by of ['email', 'phone'] as const) {
    test(`password reset by ${by}: forgot, wrong codes, the attempts limit and a reuse answer the same`, async () => {
      const user = await createUser(t);
      const real = by === 'email' ? user.email : user.phone;
      const ghost = by === 'email' ? `ghost-${Math.random().toString(36).slice(2, 8)}@example.com` : uniquePhone();
      const steps: Record<string, ReturnType<typeof shape>[]> = { real: [], ghost: [] };
      for (const [who, identifier] of [
        ['real', real],
        ['ghost', ghost],
      ] as const) {
        const forgot = await post('/auth/password/forgot', { identifier });
        const body = forgot.json() as { sessionId: string; phone: string; message: string; success: boolean };
        steps[who].push({
          status: forgot.statusCode,
          code: undefined,
          message: body.message,
          error: undefined,
          retryAfter: undefined,
        });
        assert.equal(body.success, true);
        assert.match(body.phone, by === 'email' ? /^\+\*{7}\d{2}$/ : /^\+\d+$/);
        const code = who === 'real' ? t.lastCode(user.phone) : '000000';
        // Five wrong codes (OTP_MAX_ATTEMPTS): four "Invalid code", then the session is dead.
        for (let i = 0; i < 5; i++) {
          steps[who].push(
            shape(
              await post('/auth/password/reset', {
                sessionId: body.sessionId,
                phone: body.phone,
                code: wrongCode(code),
                newPassword: 'a-much-better-passphrase',
              }),
            ),
          );
        }
        // Even the right code (for the real account) is refused now, as any code is for the ghost.
        steps[who].push(
          shape(
            await post('/auth/password/reset', {
              sessionId: body.sessionId,
              phone: body.phone,
              code,
              newPassword: 'a-much-better-passphrase',
            }),
          ),
        );
      }
      assert.deepEqual(steps.ghost, steps.real);
      assert.equal(steps.real[1].code, 'INVALID_OTP');
      assert.equal(steps.real[5].code, 'OTP_ATTEMPTS_EXCEEDED');
    });
  }

  test('the password lockout: ten wrong passwords lock an unknown identifier as they lock an account', async () => {
    const user = await createUser(t);
    const ghost = `ghost-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const answers: Record<string, ReturnType<typeof shape>[]> = { real: [], ghost: [] };
    for (const [who, identifier] of [
      ['real', user.email],
      ['ghost', ghost],
    ] as const) {
      for (let i = 0; i < 11; i++)
        answers[who].push(shape(await post('/auth/login', { identifier, password: `wrong-password-${i}` })));
    }
    assert.deepEqual(answers.ghost, answers.real);
    assert.equal(answers.real[9].status, 401);
    assert.deepEqual(answers.real[10], {
      status: 429,
      code: 'ACCOUNT_LOCKED',
      message: 'Too many wrong passwords; this account is locked for a while',
      error: 'Too Many Requests',
      retryAfter: '900',
    });
    // The lock ends for both after 15 minutes.
    t.clock.advance(15 * 60_000 + 1000);
    assert.equal((await post('/auth/login', { identifier: user.email, password: TEST_PASSWORD })).statusCode, 200);
    assert.equal((await post('/auth/login', { identifier: ghost, password: TEST_PASSWORD })).statusCode, 401);
  });

  test('a password reset for no account sends no SMS and can never succeed', async () => {
    const before = t.messages().length;
    const forgot = (await post('/auth/password/forgot', { identifier: uniquePhone() })).json() as {
      sessionId: string;
      phone: string;
    };
    assert.equal(t.messages().length, before);
    for (const code of ['000000', '123456', '999999']) {
      const res = await post('/auth/password/reset', {
        sessionId: forgot.sessionId,
        phone: forgot.phone,
        code,
        newPassword: 'a-much-better-passphrase',
      });
      assert.equal(res.statusCode, 401);
    }
  });
});
