import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { afterAll, afterEach } from 'vitest';
import { openApiDocument, type OpenApiDocument } from '../../src/openapi';
import { ERRORS } from '../../src/openapi/components';

/**
 * Every response a test receives from /api/v1 is checked against the OpenAPI document:
 * the status must be documented for the (method, path) and the body and documented
 * headers must match. A violation fails the request itself (the awaited supertest call
 * rejects) and is recorded for afterEach, so a swallowed error cannot hide it either.
 */
const PREFIX = '/api/v1';

interface Template {
  path: string;
  regex: RegExp;
  literals: number;
}

export class Contract {
  private readonly ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: Template[];

  constructor(private readonly doc: OpenApiDocument) {
    addFormats(this.ajv);
    // Ajv compiles the document's root to resolve refs into it: its OpenAPI fields are no JSON Schema keywords.
    this.ajv.addVocabulary(['openapi', 'info', 'servers', 'security', 'tags', 'paths', 'components', 'webhooks']);
    this.ajv.addSchema(doc, 'openapi.json');
    this.templates = Object.keys(doc.paths)
      .map((path) => ({
        path,
        regex: new RegExp(`^${path.split('/').map((seg) => (/^\{\w+\}$/.test(seg) ? '[^/]+' : escapeRegex(seg))).join('/')}/?$`),
        literals: path.split('/').filter((s) => s && !s.startsWith('{')).length,
      }))
      // Express mounts literal segments before parameters (`/memberships/order` before `/:identifier`).
      .sort((a, b) => b.literals - a.literals);
  }

  private resolve<T = any>(node: any): T {
    if (!node?.$ref) return node;
    const pointer = (node.$ref as string).slice(2).split('/');
    return this.resolve(pointer.reduce((at: any, key) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc));
  }

  private validate(pointer: string[], value: unknown): string[] {
    const ref = 'openapi.json#/' + pointer.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
    let fn = this.validators.get(ref);
    if (!fn) this.validators.set(ref, (fn = this.ajv.compile({ $ref: ref })));
    return fn(value) ? [] : (fn.errors ?? []).map(describe);
  }

  /** Problems of one response; empty when it matches the document. */
  check(method: string, url: string, res: { status: number; headers: Record<string, string>; body: unknown; text?: string }): string[] {
    const path = new URL(url, 'http://x').pathname;
    // CORS preflights are answered by the CORS middleware, not by an API operation.
    if (!path.startsWith(PREFIX + '/') || method.toUpperCase() === 'OPTIONS') return [];
    const sub = path.slice(PREFIX.length);
    const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
    const template = this.templates.find((t) => t.regex.test(sub) && this.doc.paths[t.path][verb]);
    let at: string[];
    if (template) {
      at = ['paths', template.path, verb, 'responses', String(res.status)];
      if (!this.doc.paths[template.path][verb].responses[res.status]) {
        return [`status ${res.status} is not documented for ${verb.toUpperCase()} ${template.path}`];
      }
    } else {
      // Not a route: the facade's fallback answers a problem (404, or the gate's 401/403/429/503).
      const error = ERRORS[res.status];
      if (!error || res.status === 409) {
        return [`status ${res.status} for ${method.toUpperCase()} ${sub}, which is no documented route`];
      }
      at = ['components', 'responses', error.name];
      if (!this.doc.components.responses[error.name]) {
        // 405: any documented path may answer it (info.description); no operation lists it.
        const problems = this.validate(['components', 'schemas', 'Problem'], res.body).map((p) => `body ${p}`);
        return res.status === 405 && !res.headers.allow ? [...problems, 'header Allow is missing'] : problems;
      }
    }
    let response = at.reduce((n: any, k) => n[k], this.doc);
    while (response.$ref) {
      // Follow $refs by hand so `at` stays a real pointer for ajv (it cannot walk through a $ref).
      at = (response.$ref as string).slice(2).split('/').map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
      response = at.reduce((n: any, k) => n[k], this.doc);
    }
    const body = verb === method.toLowerCase() ? this.checkBody(response, at, res) : []; // HEAD has no body
    return [...this.checkHeaders(response, res.headers), ...body];
  }

  private checkHeaders(response: any, headers: Record<string, string>): string[] {
    const problems: string[] = [];
    for (const [name, node] of Object.entries<any>(response.headers ?? {})) {
      const header = this.resolve(node);
      const raw = headers[name.toLowerCase()];
      if (raw === undefined) {
        if (header.required) problems.push(`header ${name} is missing`);
        continue;
      }
      // Header values are text; integer headers must be plain decimal numbers.
      const value = header.schema.type === 'integer' && /^-?\d+$/.test(raw) ? Number(raw) : raw;
      const ajvFn = this.ajv.compile(header.schema); // ajv caches compiled schemas by identity
      if (!ajvFn(value)) problems.push(`header ${name}: "${raw}" ${ajvFn.errors?.map((e) => e.message).join(', ')}`);
    }
    return problems;
  }

  private checkBody(response: any, at: string[], res: { headers: Record<string, string>; body: unknown; text?: string }): string[] {
    const type = (res.headers['content-type'] ?? '').split(';')[0].trim();
    if (!response.content) {
      return res.text || type ? [`no body is documented, got ${type || 'a body'} ${res.text?.slice(0, 200) ?? ''}`] : [];
    }
    if (!response.content[type]) {
      return [`content type "${type}" is not documented (${Object.keys(response.content).join(', ')})`];
    }
    const body = /[/+]json$/.test(type) ? res.body : res.text;
    return this.validate([...at, 'content', type, 'schema'], body).map((p) => `body ${p}`);
  }
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function describe(e: ErrorObject): string {
  const where = e.instancePath || '/';
  if (e.keyword === 'additionalProperties') return `${where}: undocumented property "${e.params.additionalProperty}"`;
  return `${where}: ${e.message}${e.keyword === 'enum' ? ` (${e.params.allowedValues.join(', ')})` : ''}`;
}

let contract: Contract | undefined;
const pending: string[] = [];

export function contractOf(): Contract {
  return (contract ??= new Contract(openApiDocument()));
}

/** A bug in the checker must fail the test, not hang supertest's callback chain. */
function safeCheck(method: string, url: string, res: any): string[] {
  try {
    return contractOf().check(method, url, res);
  } catch (err) {
    return [`the contract check itself failed: ${(err as Error).stack ?? err}`];
  }
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'del', 'head', 'options'] as const;

/** Wraps supertest's `request(app)` so every /api/v1 response is checked against the document. */
export function withContract<T extends object>(http: T): T {
  const wrapped = { ...http } as Record<string, any>;
  for (const m of METHODS) {
    const make = (http as Record<string, any>)[m];
    if (typeof make !== 'function') continue;
    wrapped[m] = (url: string) => {
      const test = make.call(http, url);
      const assert = test.assert;
      // supertest's end() -> assert(error, res, fn): the last step before the caller sees the response.
      test.assert = function (resError: unknown, res: any, fn?: (err: unknown, res: unknown) => void) {
        const found = res ? safeCheck(test.method, test.url, res).map((p) => `${test.method} ${test.url} -> ${res.status}: ${p}`) : [];
        pending.push(...found);
        return assert.call(this, resError, res, (err: unknown, r: unknown) => {
          // Fails the awaited call at its line; they stay pending too, since a callback or catch may drop this error.
          if (!err && found.length) err = new Error(`OpenAPI contract violated:\n${found.join('\n')}`);
          fn?.call(this, err, r);
        });
      };
      return test;
    };
  }
  return wrapped as T;
}

/** Hands over (and clears) the violations recorded so far: for tests of the checker itself. */
export function takeViolations(): string[] {
  return pending.splice(0);
}

function failOnPending() {
  const found = pending.splice(0);
  if (found.length) throw new Error(`OpenAPI contract violated:\n${found.join('\n')}`);
}

// Responses nobody awaited (or that failed another assertion first) still fail the test.
afterEach(failOnPending);
afterAll(failOnPending);
