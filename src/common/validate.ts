import { invalid, type FieldIssue } from '../errors/app-error';

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
  private readonly list: FieldIssue[] = [];

  add(path: Path, detail: string): this {
    this.list.push({ path, detail });
    return this;
  }

  /** Issues of a nested value (an array item, a sub-object), placed under `path`. */
  nest(path: Path, issues: FieldIssue[]): this {
    this.list.push(...under(path, issues));
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
    return this.list.length === 0;
  }

  get issues(): FieldIssue[] {
    return [...this.list];
  }

  /** Throws one 400 naming every issue, placed under `at` (where the value sits in the arguments). */
  done(at: Path = []): void {
    rejectInvalid(under(at, this.list));
  }
}

/** Issues relative to a value, moved to where the value sits: `under(['input'], [{ path: ['name'] }])` names `input.name`. */
export function under(at: Path, issues: FieldIssue[]): FieldIssue[] {
  return at.length ? issues.map((issue) => ({ ...issue, path: [...at, ...issue.path] })) : issues;
}

/** The size rule of a bulk list, as one issue at the list (`path` ends with the list's name). */
export function bulkSizeIssues(path: Path, count: number): FieldIssue[] {
  if (count >= 1 && count <= MAX_BULK) return [];
  return [{ path, detail: `${path[path.length - 1]} must hold 1-${MAX_BULK} items, got ${count}` }];
}

/** One 400 naming every issue; nothing when there are none. */
export function rejectInvalid(issues: FieldIssue[]): void {
  if (issues.length) throw invalid(issues);
}

// The rules live with their document metadata (rules.ts); re-exported for existing callers.
export { EXTERNAL_ID } from './rules';
