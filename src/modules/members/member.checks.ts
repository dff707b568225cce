import { MEMBER } from '../../common/rules';
import { Checks } from '../../common/validate';
import { AppError, type FieldIssue } from '../../errors/app-error';
import type { CreateMemberInput, UpdateMemberInput } from './member.inputs';

export const MAX_VALUE_LENGTH = MEMBER.fieldValue.max;
export const MAX_BULK = MEMBER.bulk.maxItems!;
type Path = (string | number)[];

const { pattern: EMAIL, ...EMAIL_LENGTH } = MEMBER.emailAddress;
export const IDENTITY_FIELDS = ['externalId', 'firstName', 'lastName', 'emailAddress'] as const;

/** Checks.done() throws; here several collectors are merged into one answer. */
function issuesOf(checks: Checks): FieldIssue[] {
  try {
    checks.done();
    return [];
  } catch (err) {
    if (err instanceof AppError) return err.issues;
    throw err;
  }
}

/** Field-level rules of one member body (create or patch); `base` is its path, e.g. ['input', 'members', 3]. */
export function memberIssues(input: CreateMemberInput | UpdateMemberInput, base: Path, create: boolean): FieldIssue[] {
  const checks = new Checks(base)
    .string('externalId', input.externalId, MEMBER.externalId)
    .string('firstName', input.firstName, MEMBER.firstName)
    .string('lastName', input.lastName, MEMBER.lastName)
    .string('emailAddress', input.emailAddress, EMAIL_LENGTH)
    .nullable('additionalFields', input.additionalFields, MEMBER.additionalFields);
  const email = input.emailAddress;
  if (typeof email === 'string' && checks.ok && !EMAIL!.test(email)) {
    checks.add(['emailAddress'], 'emailAddress must be a valid email address');
  }
  if (create && IDENTITY_FIELDS.every((f) => input[f] == null)) {
    checks.add([], `A member needs at least one of ${IDENTITY_FIELDS.join(', ')}`);
  }
  const issues = issuesOf(checks);
  const seen = new Map<string, number>();
  (input.additionalFields ?? []).forEach((entry, i) => {
    const at = new Checks([...base, 'additionalFields', i]);
    at.string('value', entry.value, MEMBER.fieldValue);
    const first = seen.get(entry.id.toLowerCase());
    if (first !== undefined) at.add(['id'], `additional field ${entry.id} is already given at /additionalFields/${first}`);
    else seen.set(entry.id.toLowerCase(), i);
    issues.push(...issuesOf(at));
  });
  return issues;
}

/** Values repeated across the items of one bulk request: each repeat is reported where it occurs. */
export function batchDuplicateIssues(items: CreateMemberInput[], base: Path): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const keys = [
    { field: 'externalId', norm: (s: string) => s },
    { field: 'emailAddress', norm: (s: string) => s.toLowerCase() },
  ] as const;
  for (const { field, norm } of keys) {
    const seen = new Map<string, number>();
    items.forEach((item, i) => {
      const value = item[field];
      if (typeof value !== 'string') return;
      const first = seen.get(norm(value));
      if (first === undefined) seen.set(norm(value), i);
      else issues.push({ path: [...base, i, field], detail: `${field} repeats the one of /members/${first}` });
    });
  }
  return issues;
}
