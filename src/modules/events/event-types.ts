/** Event resources and the read scope that lets a key see each (docs/events.md). */
export const EVENT_RESOURCES = {
  group: 'groups',
  group_membership: 'group_memberships',
  member: 'members',
  additional_field: 'additional_fields',
  notification: 'notifications',
  import_job: 'triggers',
  // The community's API keys (created, rotated, revoked, expired): an audit trail, never the
  // key or its hash (docs/events.md); seen by keys holding api_keys:read (keys without scopes do).
  api_key: 'api_keys',
} as const;
export type EventResource = keyof typeof EVENT_RESOURCES;

const CRUD = ['created', 'updated', 'deleted'];
const EXTRA: Record<string, string[]> = {
  group_membership: ['reordered'],
  notification: ['sent'],
  import_job: ['completed', 'failed'],
};

/** Resources whose actions are not created/updated/deleted. */
const OWN_ACTIONS: Record<string, string[]> = {
  api_key: ['created', 'rotated', 'revoked', 'expired'],
};

/** Every event type, `<resource>.<action>`. */
export const EVENT_TYPES: string[] = Object.keys(EVENT_RESOURCES).flatMap((r) => (OWN_ACTIONS[r] ?? [...CRUD, ...(EXTRA[r] ?? [])]).map((a) => `${r}.${a}`));

/** The types a key may see: those of the resources it may read. */
export function visibleTypes(scopes: Set<string>): string[] {
  return EVENT_TYPES.filter((t) => scopes.has(`${EVENT_RESOURCES[t.split('.')[0] as EventResource]}:read`));
}
