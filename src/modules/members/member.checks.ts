import { MEMBER } from '../../common/rules';
import { anyOf } from '../../db/sql';
import { Checks } from '../../common/validate';
import type { FieldIssue } from '../../errors/app-error';
import type { CreateMemberInput, UpdateMemberInput } from './member.inputs';

export const MAX_VALUE_LENGTH = MEMBER.fieldValue.max;

const { pattern: EMAIL, ...EMAIL_LENGTH } = MEMBER.emailAddress;
export const IDENTITY_FIELDS = ['externalId', 'firstName', 'lastName', 'emailAddress'] as const;

/**
 * The members of a community holding any of a list of lower-cased addresses (`external_id`,
 * `email`); parameters: the community, the addresses' `arrayOf`. Through
 * members_community_email_unique in `member_email_holders` (Migration20261128220000):
 * `lower(email_address) = ...` is not leakproof, so under row-level security a plain
 * statement read every member of the community.
 */
export const EMAIL_HOLDERS = 'select external_id, email from member_email_holders(?, ?::text[])';

/**
 * The members that already hold one of a create's externalIds or lower-cased addresses
 * (`externalId`, `email`); parameters: the community and the externalIds' `arrayOf`, then
 * EMAIL_HOLDERS's. One statement, each half through its unique index.
 */
export const TAKEN_IDENTITIES = `select external_id as "externalId", lower(email_address) as email from members
  where community_id = ? and external_id = ${anyOf()}
  union all ${EMAIL_HOLDERS}`;

/**
 * Field-level rules of one member body (create or patch, or an import row), relative to
 * the body: the caller places them (`under(['input', 'members', 3], ...)`).
 */
export function memberIssues(input: CreateMemberInput | UpdateMemberInput, create: boolean): FieldIssue[] {
  const checks = new Checks()
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
  const seen = new Map<string, number>();
  (input.additionalFields ?? []).forEach((entry, i) => {
    const at = new Checks().string('value', entry.value, MEMBER.fieldValue);
    const first = seen.get(entry.id.toLowerCase());
    if (first !== undefined) at.add(['id'], `additional field ${JSON.stringify(entry.id)} is already given at /additionalFields/${first}`);
    else seen.set(entry.id.toLowerCase(), i);
    checks.nest(['additionalFields', i], at.issues);
  });
  return checks.issues;
}

/** Values repeated across the items of one bulk request, each reported where it occurs (paths relative to the list). */
export function batchDuplicateIssues(items: CreateMemberInput[]): FieldIssue[] {
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
      else issues.push({ path: [i, field], detail: `${field} repeats the one of /members/${first}` });
    });
  }
  return issues;
}
