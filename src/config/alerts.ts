// Lateness alerts (contract section 23): the SLA of an ASAP job, the monitor's interval and each alert's threshold.
import type { EnvReader } from './env-reader.js';

export interface AlertsConfig {
  /** SLA_MONITOR: whether this process runs the lateness monitor (the shared background work). */
  monitor: boolean;
  /** SLA_INTERVAL: how often the monitor looks at every active job. */
  intervalMs: number;
  /** ASAP_SLACK: an ASAP job's promise is its quote's ETA plus this. */
  asapSlackMs: number;
  /** AT_RISK_MARGIN: job.at_risk once the ETA passes the promise's end less this. */
  atRiskMarginMs: number;
  /** UNANSWERED_AFTER: offer.unanswered when no driver accepted this long after the job entered dispatch. */
  unansweredAfterMs: number;
  /** STALLED_AFTER: driver.stalled when the driver moved under 200 m in this long. */
  stalledAfterMs: number;
}

export function readAlerts(r: EnvReader): AlertsConfig {
  return {
    monitor: r.bool('SLA_MONITOR', true),
    intervalMs: r.duration('SLA_INTERVAL', '15s', '5m'),
    asapSlackMs: r.duration('ASAP_SLACK', '15m', '1d'),
    atRiskMarginMs: r.duration('AT_RISK_MARGIN', '5m', '2h'),
    unansweredAfterMs: r.duration('UNANSWERED_AFTER', '10m', '1d'),
    stalledAfterMs: r.duration('STALLED_AFTER', '10m', '1d'),
  };
}
