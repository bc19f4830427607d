// `npm run simulate`: a virtual fleet and demand against a running instance, through the public API
// and the driver WebSocket only (no database, no server code), for demos, webhook trials and load.
// The parts live in src/cli/simulate/; this file is the entry (`npm run simulate`).
import { Accounts } from './simulate/accounts.js';
import { Api, SmsInbox } from './simulate/client.js';
import { HELP, parseOptions, type SimOptions } from './simulate/options.js';
import { printSummary } from './simulate/report.js';
import { SetupError, Simulation } from './simulate/simulation.js';

async function main(): Promise<number> {
  let opts: SimOptions;
  try {
    opts = parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    console.error(`simulate: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  const api = new Api(opts.url, opts.speed);
  let countryId: string;
  try {
    const countries = await api.call<{ items: { id: string; code: string }[] }>('GET', '/countries');
    const kenya = countries.items.find((c) => c.code === 'KE') ?? countries.items[0];
    if (!kenya) throw new Error('the instance has no countries');
    countryId = kenya.id;
  } catch (err) {
    console.error(`simulate: cannot reach ${opts.url}: ${(err as Error).message}`);
    return 1;
  }
  const accounts = new Accounts(api, new SmsInbox(opts.smsFile), opts, countryId);
  try {
    await accounts.signInAdmin();
  } catch (err) {
    console.error(`simulate: the admin sign-in was refused: ${(err as Error).message}`);
    return 1;
  }
  const sim = new Simulation(api, accounts, opts, countryId);
  let summary;
  try {
    summary = await sim.run();
  } catch (err) {
    // A set-up the instance refuses, or a request of the set-up (accounts, recurring jobs) that failed.
    console.error(
      `simulate: ${err instanceof SetupError ? '' : 'the run could not be set up: '}${(err as Error).message}`,
    );
    return 1;
  }
  printSummary(summary, opts.json);
  return summary.requests.serverErrors > 0 ? 1 : 0;
}

process.exitCode = await main();
