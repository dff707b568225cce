import type { Resource } from '../../auth/scopes';

/**
 * What a resource's events are, declared once by the module that owns the resource (beside
 * its REST route table, whose GET selection is the same). The outbox's SQL (the snapshot
 * type, the capture trigger, event_data) is fixed text in the migrations; tests check it
 * against this declaration and the entity's metadata (test/modules/events/event-shapes.test.ts).
 */
export interface EventSource {
  /** `<resource>.<action>`; its snapshot type and its column of `events` are `<resource>_snapshot`. */
  resource: string;
  /** The read scope a key needs to see these events (besides `events:read`). */
  scope: Resource;
  /** The entity whose table the capture triggers watch. */
  entity: string;
  /**
   * An event's `data`: a GraphQL selection on the entity's type, the one the REST GET answers
   * (or a documented part of it). The capture writes these fields' columns into the snapshot.
   */
  fields: string;
  /** Actions besides created, updated and deleted. */
  actions?: string[];
}

/**
 * A resource whose events the service writes itself in the changing transaction, with `data`
 * as JSON in the row (API keys: docs/security.md): no snapshot, no capture trigger.
 */
export interface WrittenEventSource {
  resource: string;
  /** The read scope a key needs to see these events (besides `events:read`). */
  scope: Resource;
  /** Its actions: the event types are `<resource>.<action>`. */
  actions: readonly string[];
}
