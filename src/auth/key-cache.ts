import { EventEmitter } from 'node:events';
import { slot } from '../state';

export interface KeyRecord {
  keyId: string;
  communityId: string;
  scopes: Set<string>;
  rateLimitPerHour: number | null;
  revoked: boolean;
  /** Epoch ms after which the key is refused; null: no expiry. */
  expiresAt: number | null;
}

/**
 * Revocations on this instance (one per runtime, src/state.ts) take effect at once: the key
 * cache forgets the key and its open subscriptions close. Other instances see them within the TTL.
 */
export const KEY_EVENTS = slot('keyEvents', () => new EventEmitter().setMaxListeners(0));
export const KEY_REVOKED = 'revoked';
/** A key's record changed (a rotation set its expiry): caches forget it; its connections stay. */
export const KEY_CHANGED = 'changed';

interface Entry {
  record: KeyRecord | null;
  expires: number;
}

/**
 * A short-lived cache of key lookups by key hash, so a warm key costs no SQL.
 * Unknown keys are cached too (negatively), bounded by `max`.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    keyEvents: EventEmitter,
    private readonly max = 10_000,
  ) {
    keyEvents.on(KEY_REVOKED, (keyId: string) => this.forget(keyId));
    keyEvents.on(KEY_CHANGED, (keyId: string) => this.forget(keyId));
  }

  get(hash: string): KeyRecord | null | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expires <= Date.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.record;
  }

  set(hash: string, record: KeyRecord | null): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { record, expires: Date.now() + this.ttlMs });
  }

  forget(keyId: string): void {
    for (const [hash, entry] of this.entries) {
      if (entry.record?.keyId === keyId) this.entries.delete(hash);
    }
  }
}
