import { getMetadataStorage } from 'type-graphql';

/**
 * A route document's fragment of every scalar and enum field a record type declares
 * (type-graphql's metadata, the same declaration the schema is built from): `id`, then the
 * type's own fields in declaration order, then the inherited ones (`createdAt`,
 * `modifiedAt`). Fields of an object type (they need a selection) and fields served by a
 * resolver (`version`, relations) are left out. A field added to the entity's GraphQL type
 * is thereby in the REST answer, its OpenAPI schema (derived from the selection) and the
 * examples, with no route to edit.
 */
export function recordFragment(name: string, type: Function): string {
  return `fragment ${name} on ${type.name} {\n  ${recordFields(type)}\n}`;
}

/** The field names of `recordFragment`, space-separated (a selection, as events declare it). */
export function recordFields(type: Function): string {
  const storage = getMetadataStorage();
  const isObjectType = (t: unknown) => storage.objectTypes.some((o) => o.target === t) || storage.interfaceTypes.some((o) => o.target === t);
  const chain: Function[] = [];
  for (let t: Function | null = type; t && t !== Function.prototype && t !== Object; t = Object.getPrototypeOf(t)) chain.push(t);
  const fields = (target: Function) =>
    storage.fields.filter((f) => f.target === target && !f.params?.length && !isObjectType(f.getType())).map((f) => f.schemaName);
  const own = fields(type);
  const inherited = chain.slice(1).flatMap(fields);
  const all = [...own, ...inherited];
  const names = [...new Set([...(all.includes('id') ? ['id'] : []), ...all])];
  return names.join(' ');
}
