// Account administration (listing, approval, rejection, suspension, reactivation, creation).
import { randomBytes } from 'node:crypto';
import type { DB } from '../../db/database.js';
import type { AccountStatus, Role } from '../../db/schema.js';
import type { Clock } from '../../shared/clock.js';
import { conflict, notFound } from '../../shared/errors.js';
import { decodeCursor, toPage } from '../../shared/pagination.js';
import type { AccountService, NewAccount } from '../auth/accounts.service.js';
import type { SessionsService } from '../auth/sessions.service.js';
import type { UsersRepository } from '../auth/users.repository.js';
import type { LocalesService } from '../locales/locales.service.js';
import type { SmsService } from '../sms/sms.service.js';
import { toUserResponse, type UserResponse } from '../auth/users.schemas.js';

type Transition = 'approve' | 'reject' | 'suspend' | 'reactivate';

export interface AdminServiceDeps {
  /** For the transaction of a status change and the revocation of the account's sessions. */
  db: DB;
  clock: Clock;
  sms: SmsService;
  locales: LocalesService;
  users: UsersRepository;
  accounts: AccountService;
  sessions: SessionsService;
}

const TRANSITIONS: Record<Transition, { from: AccountStatus[]; to: AccountStatus }> = {
  approve: { from: ['PENDING_APPROVAL', 'REJECTED'], to: 'ACTIVE' },
  reject: { from: ['PENDING_APPROVAL'], to: 'REJECTED' },
  suspend: { from: ['ACTIVE', 'PENDING_APPROVAL'], to: 'SUSPENDED' },
  reactivate: { from: ['SUSPENDED'], to: 'ACTIVE' },
};

export class AdminService {
  constructor(private readonly deps: AdminServiceDeps) {}

  async listUsers(query: { role?: Role; status?: AccountStatus; limit?: number; cursor?: string }) {
    const limit = query.limit ?? 20;
    const cursor = decodeCursor(query.cursor);
    const rows = await this.deps.users.list({ role: query.role, status: query.status, cursor, limit });
    return toPage(
      rows.map((r) => ({ ...r, createdAt: new Date(r.created_at) })),
      limit,
      toUserResponse,
    );
  }

  async getUser(id: string): Promise<UserResponse> {
    const row = await this.deps.users.getById(id);
    if (!row) throw notFound('User not found', 'USER_NOT_FOUND');
    return toUserResponse(row);
  }

  async createUser(input: NewAccount): Promise<UserResponse> {
    return toUserResponse(await this.deps.accounts.createAccount(input));
  }

  async transition(adminId: string, userId: string, action: Transition, reason?: string): Promise<UserResponse> {
    const { from, to } = TRANSITIONS[action];
    if (userId === adminId && (action === 'suspend' || action === 'reject')) {
      throw conflict('An admin cannot suspend or reject its own account', 'INVALID_STATUS_TRANSITION');
    }
    const { user, revoked } = await this.deps.db.transaction().execute(async (trx) => {
      const updated = await this.deps.users.updateStatus(trx, userId, {
        from,
        to,
        reason: reason ?? null,
        now: this.deps.clock.now(),
      });
      if (!updated) {
        const current = await this.deps.users.getStatus(trx, userId);
        if (!current) throw notFound('User not found', 'USER_NOT_FOUND');
        throw conflict(`Cannot ${action} an account whose status is ${current}`, 'INVALID_STATUS_TRANSITION');
      }
      const revokedIds =
        to === 'SUSPENDED' || to === 'REJECTED' ? await this.deps.sessions.revokeSessions(trx, userId) : [];
      return { user: updated, revoked: revokedIds };
    });
    this.deps.sessions.announceRevoked(userId, revoked, to);
    if (action === 'approve') {
      const { locale } = await this.deps.locales.forUser(user.id);
      await this.deps.sms.send(user.phone, { template: 'accountApproved', locale });
    }
    return toUserResponse(user);
  }

  /**
   * Development first run (contract section 3): with no ADMIN account at all, creates one with a
   * generated password and returns that password, which the caller prints once; else undefined.
   */
  async ensureFirstRunAdmin(admin: { email: string; phone: string }): Promise<string | undefined> {
    if (await this.deps.users.getAnyIdByRole('ADMIN')) return undefined;
    const password = randomBytes(12).toString('base64url');
    const created = await this.ensureAdmin({ ...admin, password });
    return created === 'created' ? password : undefined;
  }

  /** Start-up bootstrap: creates the ADMIN account when no account has that e-mail (idempotent). */
  async ensureAdmin(admin: { email: string; phone: string; password: string }): Promise<'created' | 'exists'> {
    if (await this.deps.users.getIdByEmail(this.deps.db, admin.email)) return 'exists';
    try {
      await this.deps.accounts.createAccount({
        ...admin,
        firstName: 'Admin',
        lastName: 'Admin',
        role: 'ADMIN',
        status: 'ACTIVE',
        countryId: null,
        isPhoneVerified: true,
      });
      return 'created';
    } catch (err) {
      // Another instance starting at the same moment created it first.
      if ((err as { code?: string }).code === 'EMAIL_TAKEN') return 'exists';
      throw err;
    }
  }
}
