import { getMetadataStorage } from 'type-graphql';
import { invalid, type FieldIssue } from '../errors/app-error';
import { ruleOf, type FieldRule } from './rules';

/** Where a value sits: from the checked value (relative) or from the GraphQL argument (placed). */
export type Path = (string | number)[];

/** Bulk bodies (members, memberships) carry 1 to MAX_BULK items, all or nothing (src/common/rules.ts). */
export { MAX_BULK } from './rules';
import { MAX_BULK } from './rules';

/**
 * The one collector for field rules. Checks collect issues and never throw; their paths
 * are relative to the value checked (`['name']`, `['additionalFields', 2, 'id']`), so one
 * rule set serves a single body, each item of a bulk body and each row of an import: the
 * caller places the issues with `under` (or `done(at)`), e.g. `under(['input', 'members', 3], ...)`.
 */
export class Checks {
  private readonly found: FieldIssue[] = [];

  add(path: Path, detail: string): this {
    this.found.push({ path, detail });
    return this;
  }

  /** Issues of a nested value (an array item, a sub-object), placed under `path`. */
  nest(path: Path, issues: FieldIssue[]): this {
    this.found.push(...under(path, issues));
    return this;
  }

  string(field: string, value: unknown, opts: { min?: number; max: number; pattern?: RegExp; patternText?: string; nullable?: boolean }): this {
    if (value === undefined) return this;
    if (value === null) {
      if (!opts.nullable) this.add([field], `${field} must not be null`);
      return this;
    }
    if (typeof value !== 'string') return this.add([field], `${field} must be a string`);
    const min = opts.min ?? 0;
    if (value.length < min || value.length > opts.max) {
      return this.add([field], min > 0 ? `${field} must be ${min}-${opts.max} characters long` : `${field} must be at most ${opts.max} characters long`);
    }
    if (value.includes('\u0000')) return this.add([field], `${field} must not contain NUL characters`);
    if (opts.pattern && !opts.pattern.test(value)) this.add([field], `${field} must match ${opts.patternText ?? opts.pattern.source}`);
    return this;
  }

  /**
   * An integer within the rule's bounds (an IntRule of src/common/rules.ts, or bounds of the
   * moment such as a page's limit); null where the rule accepts it.
   */
  int(field: string, value: unknown, rule: { min: number; max?: number; nullable?: boolean }): this {
    if (value === undefined) return this;
    if (value === null) return rule.nullable === false ? this.add([field], `${field} must not be null`) : this;
    if (typeof value === 'number' && Number.isInteger(value) && value >= rule.min && (rule.max === undefined || value <= rule.max)) return this;
    if (rule.max !== undefined) return this.add([field], `${field} must be an integer from ${rule.min} to ${rule.max}`);
    return this.add([field], rule.min === 1 ? `${field} must be a positive integer` : `${field} must be an integer of at least ${rule.min}`);
  }

  /** A list whose size is within the rule's bounds (a ListRule of src/common/rules.ts); `noun` names its items. */
  list(field: string, value: { length: number } | null | undefined, rule: { minItems?: number; maxItems?: number; nullable?: boolean }, noun = 'items'): this {
    if (value === undefined) return this;
    if (value === null) return rule.nullable === false ? this.add([field], `${field} must not be null`) : this;
    const { minItems: min = 0, maxItems: max } = rule;
    const n = value.length;
    if (n >= min && (max === undefined || n <= max)) return this;
    if (max === undefined) return this.add([field], `${field} must hold at least ${min} ${noun}, got ${n}`);
    return this.add([field], min > 0 ? `${field} must hold ${min}-${max} ${noun}, got ${n}` : `${field} must hold at most ${max} ${noun}, got ${n}`);
  }

  required(field: string, value: unknown): this {
    if (value === undefined || value === null) this.add([field], `${field} is required`);
    return this;
  }

  /** null where the field's rule (src/common/rules.ts) says it is not accepted. */
  nullable(field: string, value: unknown, rule: { nullable?: boolean }): this {
    return rule.nullable === false ? this.notNull(field, value) : this;
  }

  notNull(field: string, value: unknown): this {
    if (value === null) this.add([field], `${field} must not be null`);
    return this;
  }

  get ok(): boolean {
    return this.found.length === 0;
  }

  get issues(): FieldIssue[] {
    return [...this.found];
  }

  /** Throws one 400 naming every issue, placed under `at` (where the value sits in the arguments). */
  done(at: Path = []): void {
    rejectInvalid(under(at, this.found));
  }
}

/**
 * The issues of `value` against the field rules its input type declares (`@Rule(...)` on each
 * field, src/common/rules.ts), in declaration order: one declaration gives the GraphQL
 * type, the OpenAPI schema and the service's check. Only text, int, list and null rules
 * are checked here; a rule that needs more (another record, a nested shape) stays in the service.
 */
export function ruleIssues(type: Function, value: object): FieldIssue[] {
  const checks = new Checks();
  const values = value as Record<string, unknown>;
  for (const { target, fieldName, extensions } of getMetadataStorage().fieldExtensions) {
    if (target !== type) continue;
    const rule = ruleOf(extensions) as FieldRule | undefined;
    if (!rule || !('kind' in rule)) continue;
    const v = values[fieldName];
    if (rule.kind === 'text') checks.string(fieldName, v, rule);
    else if (rule.kind === 'int') checks.int(fieldName, v, rule);
    else if (rule.kind === 'list') checks.list(fieldName, v as { length: number } | null | undefined, rule);
    else checks.nullable(fieldName, v, rule);
  }
  return checks.issues;
}

/** Issues relative to a value, moved to where the value sits: `under(['input'], [{ path: ['name'] }])` names `input.name`. */
export function under(at: Path, issues: FieldIssue[]): FieldIssue[] {
  return at.length ? issues.map((issue) => ({ ...issue, path: [...at, ...issue.path] })) : issues;
}

/** The size rule of a bulk list, as one issue at the list (`path` ends with the list's name). */
export function bulkSizeIssues(path: Path, count: number): FieldIssue[] {
  const name = String(path[path.length - 1]);
  return under(path.slice(0, -1), new Checks().list(name, { length: count }, { minItems: 1, maxItems: MAX_BULK }).issues);
}

/** One 400 naming every issue; nothing when there are none. */
export function rejectInvalid(issues: FieldIssue[]): void {
  if (issues.length) throw invalid(issues);
}

// The rules live with their document metadata (rules.ts); re-exported for existing callers.
export { EXTERNAL_ID } from './rules';
