import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { EXAMPLE_IDS } from '../../src/common/rules';
import type { TestApp, Tenant } from './app';

/* Requests built only from the OpenAPI document's examples, as a contract tester or Swagger UI's "Try it out" builds them. */

export type Doc = Record<string, any>;
export interface Operation {
  method: string;
  path: string;
  op: any;
}

/**
 * The order in which the examples make sense: records are created before they are read,
 * changed and deleted. A new operation in the document must be placed here (a test checks it).
 */
export const ORDER = [
  'getOpenApiDocument',
  'addGroup',
  'addMember',
  'addMembers',
  'addAdditionalField',
  'addGroupMembership',
  'addGroupMemberships',
  'addNotification',
  'importGroups',
  'importMembers',
  'addWebhookEndpoint',
  'getGroups',
  'getGroup',
  'getMembers',
  'getMember',
  'getAdditionalFields',
  'getAdditionalField',
  'getGroupMemberships',
  'getGroupMembership',
  'getImportJobs',
  'getImportJob',
  'getEvents',
  'getWebhookEndpoints',
  'getWebhookEndpoint',
  'getWebhookDeliveries',
  'updateGroup',
  'updateMember',
  'updateAdditionalField',
  'updateGroupMembership',
  'updateGroupMembershipsOrder',
  'updateWebhookEndpoint',
  'rotateWebhookSecret',
  'deleteGroupMembership',
  'deleteAdditionalField',
  'deleteMember',
  'deleteGroup',
  'deleteWebhookEndpoint',
];

export function operations(doc: Doc): Map<string, Operation> {
  const out = new Map<string, Operation>();
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) out.set(op.operationId, { method, path, op });
  }
  return out;
}

export function deref(doc: Doc, node: any): any {
  while (node?.$ref) node = node.$ref.split('/').slice(1).reduce((o: any, k: string) => o[k], doc);
  return node;
}

export const successStatus = (op: any) => Number(Object.keys(op.responses).find((s) => s.startsWith('2')));

export function bodySchema(doc: Doc, op: any) {
  return op.requestBody?.content['application/json'];
}

/** Method, URL and body from the examples of the operation's parameters and body, nothing else. */
export function exampleRequest(doc: Doc, { method, path, op }: Operation, body?: unknown) {
  const query = new URLSearchParams();
  let url = path;
  for (const p of (op.parameters ?? []).map((x: any) => deref(doc, x))) {
    const value = p.example ?? p.schema?.examples?.[0];
    if (value === undefined) continue;
    if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(value)));
    if (p.in === 'query') query.set(p.name, String(value));
  }
  const qs = query.toString();
  const base = doc.servers[0].url;
  return { method, url: `${base}${url}${qs ? `?${qs}` : ''}`, body: body ?? bodySchema(doc, op)?.example };
}

export async function send(app: TestApp, t: Tenant, req: { method: string; url: string; body?: unknown }) {
  const call = (app.http as any)[req.method](req.url).set('X-API-Key', t.key);
  return req.body === undefined ? call : call.send(req.body as object);
}

/**
 * Records addressed by id only get the example's id, as if the example had named them: the
 * one thing the examples cannot say, since the service assigns ids.
 */
async function adoptExampleId(app: TestApp, operationId: string, res: any) {
  const table = {
    addAdditionalField: ['additional_fields', EXAMPLE_IDS.additionalField],
    importGroups: ['import_jobs', EXAMPLE_IDS.importJob],
    addWebhookEndpoint: ['webhook_endpoints', EXAMPLE_IDS.webhookEndpoint],
  }[operationId];
  if (!table) return;
  // Ids are unique across communities: an earlier test community may hold it.
  await app.runtime.pool.query(`delete from ${table[0]} where id = $1`, [table[1]]);
  await app.runtime.pool.query(`update ${table[0]} set id = $1 where id = $2`, [table[1], res.body.id]);
}

/** Runs the examples of every operation before `until` (all creating ones when omitted); each must succeed. */
export async function seed(app: TestApp, t: Tenant, doc: Doc, until?: string) {
  const ops = operations(doc);
  for (const id of ORDER) {
    if (id === until) return;
    // Reads change nothing; without `until`, only the creating operations run.
    if (id.startsWith('get') || (!until && !id.startsWith('add') && !id.startsWith('import'))) continue;
    const operation = ops.get(id)!;
    const res = await send(app, t, exampleRequest(doc, operation));
    if (res.status !== successStatus(operation.op)) throw new Error(`seed ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    await adoptExampleId(app, id, res);
  }
}

export { adoptExampleId };

export function validator(doc: Doc) {
  const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addVocabulary(['openapi', 'info', 'servers', 'security', 'tags', 'paths', 'components', 'webhooks']);
  ajv.addSchema(doc, 'openapi.json');
  return (schema: any, value: unknown) => {
    const fn = schema.$ref ? ajv.getSchema(`openapi.json${schema.$ref}`)! : ajv.compile(schema);
    return fn(value) as boolean;
  };
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v));

/** Sets `value` at `path` in a copy of `body`. */
export function withValue(body: any, path: (string | number)[], value: unknown) {
  const out = clone(body);
  let node = out;
  for (const key of path.slice(0, -1)) node = node[key];
  node[path[path.length - 1]] = value;
  return out;
}

export interface FieldSite {
  path: (string | number)[];
  schema: any;
  optional: boolean;
}

/** Every property of the body (nested objects and the first item of arrays included), with its schema. */
export function fieldSites(doc: Doc, schema: any, example: any, path: (string | number)[] = []): FieldSite[] {
  const s = deref(doc, schema);
  const sites: FieldSite[] = [];
  if (s?.type === 'object' || (Array.isArray(s?.type) && s.type.includes('object'))) {
    for (const [name, prop] of Object.entries<any>(s.properties ?? {})) {
      const at = [...path, name];
      sites.push({ path: at, schema: prop, optional: !(s.required ?? []).includes(name) });
      const value = example?.[name];
      if (value !== undefined && value !== null) sites.push(...fieldSites(doc, prop, value, at));
    }
  } else if (s?.anyOf) {
    const branch = s.anyOf.find((b: any) => b.$ref);
    if (branch) sites.push(...fieldSites(doc, branch, example, path));
  } else if (s?.type === 'array' && Array.isArray(example) && example.length) {
    sites.push(...fieldSites(doc, s.items, example[0], [...path, 0]));
  }
  return sites;
}

export const pointer = (path: (string | number)[]) => '/' + path.join('/');

/** JSON null allowed by the property's schema. */
export function allowsNull(doc: Doc, schema: any): boolean {
  const s = deref(doc, schema);
  if (Array.isArray(s.type)) return s.type.includes('null');
  if (s.anyOf) return s.anyOf.some((b: any) => b.type === 'null');
  return s.type === 'null';
}

/** Values just outside each documented constraint of a property (empty when it has none). */
export function justOutside(doc: Doc, schema: any, given: unknown): { keyword: string; value: unknown }[] {
  const s = deref(doc, schema);
  const example = given ?? s.examples?.[0];
  const out: { keyword: string; value: unknown }[] = [];
  if (s.maxLength !== undefined) out.push({ keyword: 'maxLength', value: 'a'.repeat(s.maxLength + 1) });
  if (s.minLength !== undefined) out.push({ keyword: 'minLength', value: 'a'.repeat(s.minLength - 1) });
  if (s.pattern !== undefined || s.format !== undefined) {
    const sample = typeof example === 'string' && example.length ? example : 'abc';
    out.push({ keyword: s.pattern ? 'pattern' : 'format', value: ' ' + sample.slice(1) });
  }
  if (s.minimum !== undefined) out.push({ keyword: 'minimum', value: s.minimum - 1 });
  if (s.maximum !== undefined) out.push({ keyword: 'maximum', value: s.maximum + 1 });
  const item = Array.isArray(example) && example.length ? example[0] : undefined;
  if (s.minItems !== undefined) out.push({ keyword: 'minItems', value: Array(s.minItems - 1).fill(item) });
  if (s.maxItems !== undefined && item !== undefined) out.push({ keyword: 'maxItems', value: Array(s.maxItems + 1).fill(item) });
  return out;
}
