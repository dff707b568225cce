export const RESOURCES = [
  'groups',
  'group_memberships',
  'additional_fields',
  'members',
  'notifications',
  'triggers',
  'events',
  'webhooks',
  // Only `api_keys:read` means something: it shows the api_key.* events of the feed, webhooks
  // and subscriptions. Keys are managed by the operator alone (docs/security.md).
  'api_keys',
] as const;
export type Resource = (typeof RESOURCES)[number];
export type Access = 'read' | 'write';

/** `groups` grants both `groups:read` and `groups:write`; no scopes at all grants everything. */
export function expandScopes(scopes: readonly string[]): Set<string> {
  const granted = new Set<string>();
  const list = scopes.length ? scopes : RESOURCES;
  for (const scope of list) {
    if ((RESOURCES as readonly string[]).includes(scope)) {
      granted.add(`${scope}:read`).add(`${scope}:write`);
    } else {
      granted.add(scope);
    }
  }
  return granted;
}

const SCOPE = new RegExp(`^(${RESOURCES.join('|')})(:(read|write))?$`);

export function invalidScopes(scopes: readonly string[]): string[] {
  return scopes.filter((s) => !SCOPE.test(s));
}
