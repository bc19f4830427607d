// `npm run admin:create -- --email a@b.c --phone +254700000000 --password '...' [--first-name A --last-name B]`
// Creates an ACTIVE ADMIN account in the configured database (DATABASE_URL, or PGlite in DATA_DIR).
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { AccountService } from '../modules/auth/accounts.service.js';
import { UsersRepository } from '../modules/auth/users.repository.js';
import { CountriesRepository } from '../modules/countries/countries.repository.js';
import { ProfilesRepository } from '../modules/profiles/profiles.repository.js';
import { toUserResponse } from '../modules/auth/users.schemas.js';
import { AppError } from '../shared/errors.js';
import { systemClock } from '../shared/clock.js';

const USAGE =
  'usage: npm run admin:create -- --email EMAIL --phone +E164 --password PASSWORD [--first-name NAME] [--last-name NAME]';

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        email: { type: 'string' },
        phone: { type: 'string' },
        password: { type: 'string' },
        'first-name': { type: 'string', default: 'Admin' },
        'last-name': { type: 'string', default: 'Admin' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (!values.email || !values.phone || !values.password) {
    console.error(`--email, --phone and --password are required\n${USAGE}`);
    return 2;
  }
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(values.email)) {
    console.error('--email must be an e-mail address');
    return 2;
  }

  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      return 1;
    }
    throw err;
  }
  const database = await openDatabase({
    url: config.database.url,
    dataDir: path.join(config.server.dataDir, 'pgdata'),
  });
  try {
    await migrateToLatest(database.db);
    const { db } = database;
    const accounts = new AccountService({
      db,
      clock: systemClock,
      users: new UsersRepository(db),
      countries: new CountriesRepository(db),
      profiles: new ProfilesRepository(db),
    });
    const user = await accounts.createAccount({
      email: values.email,
      phone: values.phone,
      password: values.password,
      firstName: values['first-name']!,
      lastName: values['last-name']!,
      role: 'ADMIN',
      status: 'ACTIVE',
      countryId: null,
      isPhoneVerified: true,
    });
    console.log(JSON.stringify(toUserResponse(user)));
    return 0;
  } catch (err) {
    if (err instanceof AppError) {
      console.error(`error: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await database.close();
  }
}

process.exitCode = await main();
