// M-Pesa collections as createServices builds them: none without M-Pesa configured.
import type { MpesaConfig } from '../../config/mpesa.js';
import { DarajaClient } from '../mpesa/daraja-client.js';
import { MpesaRepository } from '../mpesa/mpesa.repository.js';
import { PaymentsRepository } from './payments.repository.js';
import { StkCollections, type StkDeps } from './stk-collections.service.js';

export function createStkCollections(
  config: MpesaConfig | undefined,
  deps: Pick<StkDeps, 'db' | 'clock' | 'ledger' | 'logger' | 'secret'>,
): StkCollections | undefined {
  if (!config) return undefined;
  return new StkCollections({
    ...deps,
    config,
    client: new DarajaClient({ ...config, timeoutMs: config.requestTimeoutMs, clock: deps.clock }),
    repo: new PaymentsRepository(),
    callbacks: new MpesaRepository(),
  });
}
