// The push module as createServices builds it: the VAPID keys (the environment's, or on the embedded
// default kept in DATA_DIR, generated once) and, when there are keys, the sender.
import type { Config } from '../../config.js';
import type { DB } from '../../db/database.js';
import { systemClock, type Clock } from '../../shared/clock.js';
import { PushRepository } from './push.repository.js';
import { PushSender, type PushSenderDeps } from './push-sender.js';
import { PushService } from './push.service.js';
import { pushVapidKeys } from './vapid-keys.js';

export async function createPush(
  config: Config,
  deps: { db: DB; clock: Clock } & Pick<PushSenderDeps, 'logger' | 'registry' | 'readerOf'>,
): Promise<PushService> {
  const { db, clock } = deps;
  const repo = new PushRepository(db);
  const vapid = await pushVapidKeys(config);
  return new PushService({
    db,
    repo,
    clock,
    publicKey: vapid?.publicKey,
    urlRules: { allowHttp: config.push.allowHttp, allowPrivateTargets: config.push.allowPrivateTargets },
    sender: vapid
      ? new PushSender({
          repo,
          clock,
          wallClock: systemClock,
          logger: deps.logger,
          registry: deps.registry,
          vapid,
          timeoutMs: config.push.timeoutMs,
          concurrency: config.push.concurrency,
          allowPrivateTargets: config.push.allowPrivateTargets,
          readerOf: deps.readerOf,
        })
      : undefined,
  });
}
