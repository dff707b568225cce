import type { Config } from '../../config';
import { slot } from '../../state';

/**
 * The event and webhook settings of a runtime, taken from the Config when the events module
 * starts (module.ts): the feed, the purge job, webhook checks and the delivery task read them
 * from the runtime's state (src/state.ts).
 */
export interface EventSettings {
  retentionDays: number;
  allowPrivateNetworks: boolean;
  retryBaseMs: number;
  timeoutMs: number;
}

export const DEFAULT_EVENT_SETTINGS: EventSettings = { retentionDays: 30, allowPrivateNetworks: false, retryBaseMs: 5000, timeoutMs: 10_000 };

export const EVENT_SETTINGS = slot<EventSettings>('eventSettings', () => ({ ...DEFAULT_EVENT_SETTINGS }));

export const eventSettingsOf = (config: Config): EventSettings => ({
  retentionDays: config.eventsRetentionDays,
  allowPrivateNetworks: config.webhookAllowPrivateNetworks,
  retryBaseMs: config.webhookRetryBaseMs,
  timeoutMs: config.webhookTimeoutMs,
});
