import { isDeadlock, transaction, withDeadlockRetry } from '../../db/transaction';
import { assertVersion, preconditionFailed, VERSION_COLUMN } from '../../db/version';
import { LockMode, wrap } from '@mikro-orm/core';
import { leanCheckedPage, leanFindOne, leanPage, type LeanFilter } from '../../db/lean';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageWindow, type Page } from '../../common/pagination';
import { refWhere, type RecordRef } from '../../common/ref';
import { mapUnique } from '../../common/unique';
import { AppError, invalid, notFound, orNotFound, type FieldIssue } from '../../errors/app-error';
import { batchDuplicateIssues, IDENTITY_FIELDS, memberIssues, TAKEN_IDENTITIES } from './member.checks';
import { lockGroups } from '../groups/group.lock';
import { Member, MemberFieldValue } from './member.entity';
import type { CreateMemberInput, CreateMembersInput, MemberListArgs, UpdateMemberInput } from './member.inputs';
import { unknownFieldIssues, writeValues } from './member-values';
import { insertRecords } from '../../db/write';
import { bulkSizeIssues, Checks, rejectInvalid, under, type Path } from '../../common/validate';
import { containsPattern, searchText } from '../../common/search';
import { isId } from '../../common/ids';
import { SEARCH } from '../../common/rules';
import { TEXT_WALK_ROWS, WALK_ROWS } from '../../db/lean';
import { anyOf, arrayOf } from '../../db/sql';

/** `whole`: a bulk insert racing another writer cannot tell the item, so it points at the array. */
const taken = (base: Path, whole?: Path) => ({
  members_community_external_id_unique: { path: whole ?? [...base, 'externalId'], detail: 'externalId is already used by another member' },
  members_community_email_unique: { path: whole ?? [...base, 'emailAddress'], detail: 'emailAddress is already used by another member' },
});

/** The member joined a group between reading its groups and locking it: the delete starts again. */
class GroupsMoved extends Error {}

/**
 * The conditions of a member list's filter (alias `t` = members), checked first (400 naming
 * `filter.q`, `filter.emailAddress`, `filter.fields.<i>`); `fieldIds` are the additional field
 * ids to check against the community. Under row-level security a condition that is not
 * leakproof (`lower()`, `ILIKE` of a column) never reaches an index, so the address and the text
 * are found by functions with their owner's rights (Migration20261125070000) that check the
 * community as the policies do; the field values by a stored digest (Migration20261125080000).
 */
export function memberFilters(communityId: string, filter: MemberListArgs['filter']): { filters: LeanFilter[]; fieldIds: string[] } {
  const filters: LeanFilter[] = [];
  if (!filter) return { filters, fieldIds: [] };
  const checks = new Checks();
  const q = searchText(checks, filter.q);
  checks.string('emailAddress', filter.emailAddress, { ...SEARCH.emailAddress, nullable: true });
  const fields = filter.fields ?? [];
  if (SEARCH.fields.maxItems !== undefined && fields.length > SEARCH.fields.maxItems) {
    checks.add(['fields', SEARCH.fields.maxItems, 'id'], `At most ${SEARCH.fields.maxItems} additional field filters can be combined`);
  }
  fields.forEach((f, i) => checks.nest(['fields', i], new Checks().string('value', f.value, SEARCH.fieldValue).issues));
  rejectInvalid(under(['filter'], checks.issues));
  // In this order: the first filter finds the page's rows, the others test them (pageStatement).
  if (filter.emailAddress != null) {
    // members_community_email_unique: (community_id, lower(email_address)).
    filters.push({
      sql: 't."id" in (select x from member_ids_by_email(?::uuid, ?) x)',
      params: [communityId, filter.emailAddress],
      test: { sql: 'lower(t."email_address") = lower(?)', params: [filter.emailAddress] },
      unique: true,
    });
  }
  if (q !== undefined) {
    // members_search_lower_idx: one trigram GIN index over the stored lower-cased joined text
    // (Migration20261125130000; pg_trgm serves LIKE '%...%'); `LIKE lower(pattern)` on it is what
    // ILIKE does in UTF-8. A text without a space: that one test (it cannot span two columns), as
    // member_search_rows does; with a space, each column is then tested too.
    const p = containsPattern(q);
    const perColumn = q.includes(' ');
    filters.push({
      source: { sql: 'member_search_rows(?::uuid, ?)', params: [communityId, p] },
      sourceFirst: { sql: 'member_search_first(?::uuid, ?, ?::int)', params: [communityId, p] },
      sql: perColumn
        ? `t."search_text" like lower(?) and (t."first_name" ilike ? or t."last_name" ilike ? or (t."first_name" || ' ' || t."last_name") ilike ?
         or t."email_address" ilike ? or t."external_id" ilike ?)`
        : `t."search_text" like lower(?)`,
      params: perColumn ? [p, p, p, p, p, p] : [p],
      // A text most members hold ("com", "a") fills the page from the first rows (2 s through the source at a million).
      walk: { rows: TEXT_WALK_ROWS, grows: true },
    });
  }
  for (const f of fields) {
    // member_field_values_field_order_idx: (field_id, value_md5, member_created_at, member_id) include (community_id);
    // the stored digest is compared with `=` (leakproof: the index serves the service role), the value itself decides.
    // Per row: the member's own value through the primary key; OFFSET 0 keeps it a per-row test.
    const field = isId(f.id) ? f.id : null;
    filters.push({
      // In the default order: the digest's entries straight from the index (index-only), in the
      // page's order; the test below then checks each row's value itself. Not `v.value = ?` here:
      // PostgreSQL multiplies the two conditions' selectivities, expects a handful of rows, and
      // then may read and sort every match instead of stopping at the page's last one.
      ordered: {
        sql: `select v.member_id as "id", v.member_created_at as "created_at" from member_field_values v
               where v.field_id = ?::uuid and v.value_md5 = md5(?) and v.community_id = ?
               order by v.member_created_at, v.member_id`,
        params: [field, f.value, communityId],
      },
      sql: 't."id" in (select v.member_id from member_field_values v where v.field_id = ?::uuid and v.value_md5 = md5(?) and v.value = ?)',
      params: [field, f.value, f.value],
      test: {
        sql: 'exists (select 1 from member_field_values v where v.member_id = t."id" and v.field_id = ?::uuid and v.value_md5 = md5(?) and v.value = ? offset 0)',
        params: [field, f.value, f.value],
      },
      // Index entries only (an index-only scan; md5 collisions aside, the same rows): capped at WALK_ROWS.
      walk: {
        rows: WALK_ROWS,
        many: {
          sql: `(select count(*) from (select 1 from member_field_values v where v.field_id = ?::uuid and v.value_md5 = md5(?) limit ${WALK_ROWS}) x) >= ${WALK_ROWS}`,
          params: [field, f.value],
        },
      },
    });
  }
  return { filters, fieldIds: fields.map((f) => f.id) };
}

export class MemberService {
  constructor(private readonly em: EntityManager) {}

  /**
   * One page, in one statement whatever the filters: each filter is a condition of the page
   * statement (served by the search indexes, docs/performance.md), and the additional field
   * ids of `field.` filters are checked in that same statement.
   */
  async list(communityId: string, args: MemberListArgs): Promise<Page<Member>> {
    const window = pageWindow(args);
    const { filters, fieldIds } = memberFilters(communityId, args.filter);
    if (!fieldIds.length) return leanPage(this.em, Member, { communityId }, window, undefined, filters);
    const asked = [...new Set(fieldIds.filter(isId).map((id) => id.toLowerCase()))];
    const { page, check } = await leanCheckedPage<Member, { knownFieldIds: string[] | null }>(this.em, Member, { communityId }, window, {
      select: `array(select f.id::text from additional_fields f where f.community_id = ? and f.id = ${anyOf('uuid')}) as "knownFieldIds"`,
      params: [communityId, arrayOf(asked)],
      names: ['knownFieldIds'],
    }, filters);
    const known = new Set(check.knownFieldIds ?? []);
    const unknown: FieldIssue[] = [];
    fieldIds.forEach((id, i) => {
      if (!known.has(id.toLowerCase())) unknown.push({ path: ['filter', 'fields', i, 'id'], detail: `${JSON.stringify(id)} is not an additional field of this community` });
    });
    rejectInvalid(unknown);
    return page;
  }

  /** For output: a plain row. 404, not 403, for another community's member; a non-UUID id matches nothing. */
  async read(communityId: string, ref: RecordRef): Promise<Member> {
    const where = refWhere(ref);
    return orNotFound(where && (await leanFindOne(this.em, Member, { ...where, communityId })), 'Member');
  }

  /** The entity locked `for update` in em's transaction: concurrent writes of one member apply one after the other. */
  async lock(communityId: string, ref: RecordRef, em: EntityManager): Promise<Member> {
    const where = refWhere(ref);
    return orNotFound(where && (await em.findOne(Member, { ...where, communityId }, { lockMode: LockMode.PESSIMISTIC_WRITE })), 'Member');
  }

  async create(communityId: string, input: CreateMemberInput): Promise<Member> {
    const [member] = await this.insert(communityId, [input], { item: () => ['input'] });
    return member;
  }

  async createMany(communityId: string, input: CreateMembersInput): Promise<Member[]> {
    const list = ['input', 'members'];
    rejectInvalid(bulkSizeIssues(list, input.members.length));
    return this.insert(communityId, input.members, { item: (i) => [...list, i], list });
  }

  /**
   * All or nothing, set-based: one statement checks the additional field ids, one
   * looks for taken externalIds/emails, one inserts the members, one their values.
   * `at.item(i)` is where item i sits in the arguments; `at.list` is the bulk list, if any.
   * A transaction only when there are values to write: the members' INSERT alone is one
   * atomic statement, and the checks before it are reads whose answers the constraints
   * back up (a value taken or a field deleted in between is a 409 from the INSERT), so a
   * create without values takes one round trip instead of two (BEGIN with it, COMMIT).
   */
  private async insert(communityId: string, items: CreateMemberInput[], at: { item: (i: number) => Path; list?: Path }): Promise<Member[]> {
    const pathOf = at.item;
    const issues = items.flatMap((item, i) => under(pathOf(i), memberIssues(item, true)));
    if (at.list) issues.push(...under(at.list, batchDuplicateIssues(items)));
    const work = async (em: EntityManager) => {
      const bodies = items.map((item, i) => ({ entries: item.additionalFields ?? [], path: pathOf(i) }));
      issues.push(...(await unknownFieldIssues(em, communityId, bodies)));
      rejectInvalid(issues);
      await this.rejectTaken(em, communityId, items, pathOf);

      const fields = items.map((item) => ({
        externalId: item.externalId ?? null,
        firstName: item.firstName ?? null,
        lastName: item.lastName ?? null,
        emailAddress: item.emailAddress ?? null,
      }));
      // A concurrent writer can still take a value after the check: 409 without an item pointer.
      const members = await mapUnique(() => insertRecords(em, Member, communityId, fields), taken(['input'], at.list));
      const values = items.flatMap((item, i) =>
        (item.additionalFields ?? [])
          .filter((e) => e.value != null)
          .map((e) => ({ communityId, memberId: members[i].id, fieldId: e.id.toLowerCase(), value: e.value!, memberCreatedAt: members[i].createdAt })),
      );
      if (values.length) await em.insertMany(MemberFieldValue, values);
      return members;
    };
    const hasValues = (item: CreateMemberInput) => (item.additionalFields ?? []).some((e) => e.value != null);
    return items.some(hasValues) ? transaction(this.em, work) : work(this.em);
  }

  /** 409 per item whose externalId or email (case-insensitive) another member of the community has. */
  private async rejectTaken(em: EntityManager, communityId: string, items: CreateMemberInput[], pathOf: (i: number) => Path) {
    const externalIds = items.map((i) => i.externalId).filter((v): v is string => v != null);
    const emails = items.map((i) => i.emailAddress?.toLowerCase()).filter((v): v is string => v != null);
    if (!externalIds.length && !emails.length) return;
    const rows = await em.execute<{ externalId: string | null; email: string | null }[]>(
      TAKEN_IDENTITIES,
      [communityId, arrayOf(externalIds), communityId, arrayOf(emails)],
    );
    const usedIds = new Set(rows.map((r) => r.externalId));
    const usedEmails = new Set(rows.map((r) => r.email));
    const issues: FieldIssue[] = [];
    items.forEach((item, i) => {
      if (item.externalId != null && usedIds.has(item.externalId)) {
        issues.push({ path: [...pathOf(i), 'externalId'], detail: 'externalId is already used by another member' });
      }
      if (item.emailAddress != null && usedEmails.has(item.emailAddress.toLowerCase())) {
        issues.push({ path: [...pathOf(i), 'emailAddress'], detail: 'emailAddress is already used by another member' });
      }
    });
    if (issues.length) throw new AppError('CONFLICT', issues.length === 1 ? issues[0].detail : 'Some values are already used by other members', issues);
  }

  async update(communityId: string, ref: RecordRef, input: UpdateMemberInput, expectedVersion?: string | null): Promise<Member> {
    rejectInvalid(under(['input'], memberIssues(input, false)));
    return transaction(this.em, async (em) => {
      // Row lock: concurrent patches of one member apply one after the other.
      const member = await this.lock(communityId, ref, em);
      await assertVersion(em, 'members', member.id, expectedVersion);
      const entries = input.additionalFields ?? [];
      const unknown = await unknownFieldIssues(em, communityId, [{ entries, path: ['input'] }]);
      rejectInvalid(unknown);
      // PATCH: absent fields stay; MikroORM writes only what changed and then sets modifiedAt.
      const { additionalFields: _values, ...fields } = input;
      wrap(member).assign(fields, { ignoreUndefined: true });
      if (IDENTITY_FIELDS.every((f) => member[f] == null)) {
        throw invalid([{ path: ['input'], detail: `A member needs at least one of ${IDENTITY_FIELDS.join(', ')}` }]);
      }
      // Changed values alone are a change of the member too.
      if (entries.length && (await writeValues(em, member.id, entries))) member.modifiedAt = new Date();
      await mapUnique(() => em.flush(), taken(['input']));
      return member;
    });
  }

  /** Its memberships go with it (foreign key cascade); a trigger keeps groups' membershipCount exact. */
  async remove(communityId: string, ref: RecordRef, expectedVersion?: string | null): Promise<boolean> {
    const where = refWhere(ref);
    if (!where) throw notFound('Member');
    // Lock order, the same as every membership writer (imports included): the member's groups
    // first, in id order (the cascade's count trigger updates them), then the member row. The
    // group set is read before the member is locked, so a membership committed in between
    // (an import adding this member to another group) would make the cascade touch a group
    // this transaction does not hold: that is seen once the member row is ours (nothing can
    // add a membership to it any more) and the attempt starts again, never deadlocking.
    // A deadlock (benign: PostgreSQL rolled the attempt back entirely) or new memberships: again.
    const deleted = await withDeadlockRetry(
      this.em,
      async (tem) => {
        const member = await tem.findOne(Member, { ...where, communityId }, { fields: ['id'] });
        if (!member) return 0;
        // tem.execute: inside this transaction (the connection's execute would use another connection and drop the lock at once).
        const locked = await lockGroups(tem, { groupsOf: member.id });
        // One statement locks the member and reads its version for If-Match (what assertVersion would read again).
        const [held] = await tem.execute<{ version: string }[]>(`select ${VERSION_COLUMN('t')} as version from members t where t.id = ? for update`, [
          member.id,
        ]);
        if (!held) return 0; // deleted meanwhile
        if (expectedVersion != null && held.version !== expectedVersion) throw preconditionFailed();
        const groups = await tem.execute<{ group_id: string }[]>('select distinct group_id from group_memberships where member_id = ?', [member.id]);
        const have = new Set(locked.map((g) => g.id));
        if (groups.some((g) => !have.has(g.group_id))) throw new GroupsMoved();
        return tem.nativeDelete(Member, { id: member.id, communityId });
      },
      (err) => isDeadlock(err) || err instanceof GroupsMoved,
    );
    if (!deleted) throw notFound('Member');
    return true;
  }
}
