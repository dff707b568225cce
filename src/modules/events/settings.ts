import type { Config } from '../../config';

/**
 * The event and webhook settings of this process, set once at start-up from the Config
 * (startRuntime): the feed, the purge job and the delivery task read them here.
 */
export const eventSettings = {
  retentionDays: 30,
  allowPrivateNetworks: false,
  retryBaseMs: 5000,
  timeoutMs: 10_000,
};

export function configureEvents(config: Config): void {
  eventSettings.retentionDays = config.eventsRetentionDays;
  eventSettings.allowPrivateNetworks = config.webhookAllowPrivateNetworks;
  eventSettings.retryBaseMs = config.webhookRetryBaseMs;
  eventSettings.timeoutMs = config.webhookTimeoutMs;
}
