// The simulator's accounts: signing in with the SMS code, registering, the admin's approvals, refresh.
import { ApiError, type Api, type SmsInbox } from './client.js';
import type { SimOptions } from './options.js';

export interface Session {
  userId: string;
  accessToken: string;
  refreshToken: string;
}

export interface Account {
  email: string;
  phone: string;
  password: string;
  role: 'DRIVER' | 'BUSINESS' | 'CUSTOMER';
  firstName: string;
  lastName: string;
  extra: Record<string, unknown>;
}

/** The business or the customer of a seed: the same account on every run with that seed. */
export function seededAccount(seed: number, role: 'BUSINESS' | 'CUSTOMER', extra: Record<string, unknown>): Account {
  const name = role === 'BUSINESS' ? 'Business' : 'Customer';
  return {
    email: `sim${seed}-${name.toLowerCase()}@sim.example`,
    phone: `+254${role === 'BUSINESS' ? '7200' : '7210'}${String(seed % 100_000).padStart(5, '0')}`,
    password: `sim${seed}-${name}-pass`,
    role,
    firstName: 'Simulated',
    lastName: name,
    extra,
  };
}

export class Accounts {
  private admin: Session | undefined;
  constructor(
    private readonly api: Api,
    private readonly sms: SmsInbox,
    private readonly opts: SimOptions,
    private readonly countryId: string,
  ) {}

  async login(identifier: string, password: string, phoneHint?: string): Promise<Session> {
    const mark = await this.sms.mark();
    const started = await this.api.call<{ sessionId: string; phone: string }>('POST', '/auth/login', {
      identifier,
      password,
    });
    const code = await this.sms.code(phoneHint ?? started.phone, mark);
    const verified = await this.api.call<{ accessToken: string; refreshToken: string; user: { id: string } }>(
      'POST',
      '/auth/login/verify-otp',
      {
        sessionId: started.sessionId,
        phone: started.phone,
        code,
      },
    );
    return { userId: verified.user.id, accessToken: verified.accessToken, refreshToken: verified.refreshToken };
  }

  async signInAdmin(): Promise<Session> {
    this.admin = await this.login(this.opts.adminEmail, this.opts.adminPassword);
    return this.admin;
  }

  /** Logs in an account made by an earlier run, or registers it (and has the admin approve it). */
  async ensure(account: Account): Promise<Session> {
    try {
      return await this.login(account.email, account.password, account.phone);
    } catch (err) {
      if (!(err instanceof ApiError) || (err.status !== 401 && err.status !== 403)) throw err;
      if (err.status === 403) {
        await this.approve(account.email);
        return this.login(account.email, account.password, account.phone);
      }
    }
    const mark = await this.sms.mark();
    const otp = await this.api.call<{ sessionId: string }>('POST', '/auth/register/send-otp', { phone: account.phone });
    const code = await this.sms.code(account.phone, mark);
    const registered = await this.api.call<{ user: { id: string; status: string } }>('POST', '/auth/register', {
      sessionId: otp.sessionId,
      phone: account.phone,
      code,
      email: account.email,
      password: account.password,
      firstName: account.firstName,
      lastName: account.lastName,
      role: account.role,
      countryId: this.countryId,
      ...account.extra,
    });
    if (registered.user.status === 'PENDING_APPROVAL')
      await this.adminCall('POST', `/admin/users/${registered.user.id}/approve`);
    return this.login(account.email, account.password, account.phone);
  }

  private async approve(email: string): Promise<void> {
    for (const status of ['PENDING_APPROVAL', 'REJECTED']) {
      let cursor: string | null = null;
      do {
        const page: { items: { id: string; email: string }[]; nextCursor: string | null } = await this.adminCall(
          'GET',
          `/admin/users?status=${status}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        );
        const user = page.items.find((u) => u.email.toLowerCase() === email.toLowerCase());
        if (user) {
          await this.adminCall('POST', `/admin/users/${user.id}/approve`);
          return;
        }
        cursor = page.nextCursor;
      } while (cursor);
    }
    throw new Error(`${email} cannot log in and is not waiting for approval (suspended?)`);
  }

  async adminCall<T>(method: string, path: string, body?: unknown): Promise<T> {
    if (!this.admin) throw new Error('admin not signed in');
    try {
      return await this.api.call<T>(method, path, body, this.admin.accessToken);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        await this.refresh(this.admin);
        return this.api.call<T>(method, path, body, this.admin.accessToken);
      }
      throw err;
    }
  }

  /** A call as the session's account; an expired access token (soon, under CLOCK_RATE) is refreshed (twice at most). */
  async callAs<T>(session: Session, method: string, path: string, body?: unknown): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const token = session.accessToken;
      try {
        return await this.api.call<T>(method, path, body, token);
      } catch (err) {
        const expired = err instanceof ApiError && err.status === 401 && err.body?.code === 'TOKEN_EXPIRED';
        if (!expired || attempt >= 3) throw err;
        if (session.accessToken === token) await this.refresh(session);
      }
    }
  }

  private readonly refreshing = new Map<Session, Promise<void>>();

  /** A new access token for the session; calls that find it expired at once share one refresh. */
  async refresh(session: Session): Promise<void> {
    let pending = this.refreshing.get(session);
    if (!pending) {
      pending = this.api
        .call<{ accessToken: string }>('POST', '/auth/refresh', { refreshToken: session.refreshToken })
        .then(({ accessToken }) => {
          session.accessToken = accessToken;
        })
        .finally(() => this.refreshing.delete(session));
      this.refreshing.set(session, pending);
    }
    await pending;
  }
}
