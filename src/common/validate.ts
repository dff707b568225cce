import { invalid, type FieldIssue } from '../errors/app-error';

/**
 * A small collector for business-rule checks in services: each check adds an
 * issue with its path, and `done()` throws one 400 naming every bad field.
 */
export class Checks {
  private readonly issues: FieldIssue[] = [];

  constructor(private readonly base: (string | number)[] = []) {}

  add(path: (string | number)[], detail: string): this {
    this.issues.push({ path: [...this.base, ...path], detail });
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
    return this.issues.length === 0;
  }

  done(): void {
    if (this.issues.length) throw invalid(this.issues);
  }
}

// The rules live with their document metadata (rules.ts); re-exported for existing callers.
export { EXTERNAL_ID } from './rules';
