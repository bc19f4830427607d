// Builds the auth services from the module context (used by the auth and admin modules).
import { createHmac } from 'node:crypto';
import type { ModuleContext } from '../../http/context.js';
import { createSmsSender, type SmsSender } from '../../sms/sms.js';
import { AccountService } from './accounts.service.js';
import { AuthService } from './auth.service.js';

export interface AuthServices {
  accounts: AccountService;
  auth: AuthService;
  sms: SmsSender;
}

const built = new WeakMap<ModuleContext['deps'], AuthServices>();

/** One set per app (the auth and admin modules share it, and so one SMS sender). */
export function createAuthServices(ctx: ModuleContext): AuthServices {
  let services = built.get(ctx.deps);
  if (!services) built.set(ctx.deps, (services = buildAuthServices(ctx)));
  return services;
}

function buildAuthServices({ deps, tokens }: ModuleContext): AuthServices {
  const sms = createSmsSender(deps.config, deps.logger, deps.clock);
  const accounts = new AccountService({ db: deps.database.db, clock: deps.clock });
  const auth = new AuthService({
    db: deps.database.db,
    clock: deps.clock,
    config: deps.config,
    codeKey: createHmac('sha256', deps.config.jwtSecret).update('otp-code-key').digest('hex'),
    tokens,
    bus: deps.bus,
    sms,
    accounts,
  });
  return { accounts, auth, sms };
}
