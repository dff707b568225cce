import { additionalFieldEvents } from '../additional-fields/additional-field.rest';
import { groupEvents } from '../groups/group.rest';
import { importJobEvents } from '../imports/import.rest';
import { memberEvents } from '../members/member.rest';
import { membershipEvents } from '../memberships/membership.rest';
import { notificationEvents } from '../notifications/notification.rest';
import { apiKeyEvents } from '../communities/key-events';
import type { EventSource, WrittenEventSource } from './event-source';

/**
 * Every resource that emits events, each declared by its own module (docs/events.md). The
 * order is that of event_data's snapshot parameters in the migrations; a test reads the
 * catalog to keep them in step.
 */
export const EVENT_SOURCES: readonly EventSource[] = [groupEvents, membershipEvents, memberEvents, additionalFieldEvents, notificationEvents, importJobEvents];

/** Resources whose events the service writes itself, their `data` JSON in the row (no capture). */
export const WRITTEN_EVENT_SOURCES: readonly WrittenEventSource[] = [apiKeyEvents];

const CRUD = ['created', 'updated', 'deleted'];

/** Every event type, `<resource>.<action>`. */
export const EVENT_TYPES: string[] = [
  ...EVENT_SOURCES.flatMap((s) => [...CRUD, ...(s.actions ?? [])].map((a) => `${s.resource}.${a}`)),
  ...WRITTEN_EVENT_SOURCES.flatMap((s) => s.actions.map((a) => `${s.resource}.${a}`)),
];

/** The types a key may see: those of the resources it may read. */
export function visibleTypes(scopes: Set<string>): string[] {
  const scopeOf = new Map<string, string>([...EVENT_SOURCES, ...WRITTEN_EVENT_SOURCES].map((s) => [s.resource, s.scope]));
  return EVENT_TYPES.filter((t) => scopes.has(`${scopeOf.get(t.split('.')[0])}:read`));
}

/** An event row's snapshot column (`e` the alias of `events`): the composite type of its record. */
export const snapshotColumn = (s: EventSource) => `${s.resource}_snapshot`;

/**
 * An event's `data` as JSON, whichever way it is stored (`e` the alias of `events`): the
 * record's snapshot rendered by event_data, or the small JSON of a deleted or reordered event.
 */
export const eventData = (e: string) => `event_data(${e}.data${EVENT_SOURCES.map((s) => `, ${e}.${snapshotColumn(s)}`).join('')})`;
