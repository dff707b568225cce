/**
 * What one started service keeps for its whole life (one per `startRuntime`), instead of
 * module-level singletons: the event hub, the event settings, the key revocation channel.
 * A value is named by a `Slot` that the owning code declares; a feature module fills its
 * slots in its `start` hook (src/modules/module.ts). Two runtimes in one process (the tests
 * start several) never share a value.
 */
export interface Slot<T> {
  readonly name: string;
  /** The value when nothing set one (built once per state, on first use). */
  readonly init?: () => T;
}

export const slot = <T>(name: string, init?: () => T): Slot<T> => ({ name, init });

export class RuntimeState {
  private readonly values = new Map<Slot<unknown>, unknown>();

  /** The slot's value; its `init` when unset; throws for a slot without one (its module did not start). */
  get<T>(slot: Slot<T>): T {
    const value = this.find(slot);
    if (value === undefined) throw new Error(`${slot.name} is not available: its module has not started`);
    return value;
  }

  /** The slot's value, its `init` when unset, or undefined. */
  find<T>(slot: Slot<T>): T | undefined {
    if (!this.values.has(slot) && slot.init) this.values.set(slot, slot.init());
    return this.values.get(slot) as T | undefined;
  }

  set<T>(slot: Slot<T>, value: T): void {
    this.values.set(slot, value);
  }
}
