import { transaction } from '../../db/transaction';
import { leanFindOne, leanPage, TEXT_WALK_ROWS, type LeanFilter } from '../../db/lean';
import { insertRecords } from '../../db/write';
import { wrap } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageWindow, type Page } from '../../common/pagination';
import { refWhere, type RecordRef } from '../../common/ref';
import { mapUnique } from '../../common/unique';
import { Checks, rejectInvalid, ruleIssues, under } from '../../common/validate';
import { notFound, orNotFound, type FieldIssue } from '../../errors/app-error';
import { containsPattern, searchText } from '../../common/search';
import { assertVersion } from '../../db/version';
import { Group, GroupState } from './group.entity';
import { CreateGroupInput, type GroupListArgs, type UpdateGroupInput } from './group.inputs';

/**
 * The field rules of a group body, relative to it, as the input type declares them (the
 * rules of CreateGroupInput and UpdateGroupInput are the same); group imports check their
 * rows with them too.
 */
export function groupIssues(input: CreateGroupInput | UpdateGroupInput): FieldIssue[] {
  return ruleIssues(CreateGroupInput, input);
}

const EXTERNAL_ID_TAKEN = {
  groups_community_external_id_unique: { path: ['input', 'externalId'], detail: 'externalId is already used by another group' },
};

/**
 * The conditions of a group list's filter, checked first (400 naming `filter.q`): with `q` the
 * page's rows come from group_search_rows, which reads them through the trigram indexes on name
 * and external_id with its owner's rights (Migration20261125070000: under row-level security
 * ILIKE never reaches an index), for this community only.
 */
export function groupFilters(communityId: string, filter: GroupListArgs['filter']): LeanFilter[] {
  if (!filter) return [];
  const checks = new Checks();
  const q = searchText(checks, filter.q);
  checks.done(['filter']);
  if (q === undefined) return [];
  const p = containsPattern(q);
  return [
    {
      source: { sql: 'group_search_rows(?::uuid, ?)', params: [communityId, p] },
      sql: 't."name" ilike ? or t."external_id" ilike ?',
      params: [p, p],
      walk: { rows: TEXT_WALK_ROWS, grows: true },
    },
  ];
}

export class GroupService {
  constructor(private readonly em: EntityManager) {}

  /** One statement, with the filter's conditions (groupFilters). */
  async list(communityId: string, args: GroupListArgs): Promise<Page<Group>> {
    const window = pageWindow(args);
    const filters = groupFilters(communityId, args.filter);
    return leanPage(this.em, Group, { communityId }, window, undefined, filters);
  }

  /** For output: a plain row, no entity to track. 404, not 403, for another community's group: do not reveal that it exists. */
  async read(communityId: string, ref: RecordRef, em = this.em): Promise<Group> {
    const where = refWhere(ref);
    return orNotFound(where && (await leanFindOne(em, Group, { ...where, communityId })), 'Group');
  }

  /** The entity, to change it (no lock), in em (the caller's transaction when given). */
  async find(communityId: string, ref: RecordRef, em = this.em): Promise<Group> {
    const where = refWhere(ref);
    return orNotFound(where && (await em.findOne(Group, { ...where, communityId })), 'Group');
  }

  async create(communityId: string, input: CreateGroupInput): Promise<Group> {
    rejectInvalid(under(['input'], groupIssues(input)));
    // The fields given; the entity's defaults apply to those left out (insertRecords).
    const values = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as Partial<Group>;
    const [group] = await mapUnique(() => insertRecords(this.em, Group, communityId, [values]), EXTERNAL_ID_TAKEN);
    return group;
  }

  /** `expectedVersion`: a conditional write (412 when the group changed since), checked and written in one transaction. */
  async update(communityId: string, ref: RecordRef, input: UpdateGroupInput, expectedVersion?: string | null): Promise<Group> {
    rejectInvalid(under(['input'], groupIssues(input)));
    return transaction(this.em, async (em) => {
      const group = await this.find(communityId, ref, em);
      await assertVersion(em, 'groups', group.id, expectedVersion);
      // PATCH: absent fields stay; MikroORM writes only what changed and then sets modifiedAt.
      wrap(group).assign(input, { ignoreUndefined: true });
      await mapUnique(() => em.flush(), EXTERNAL_ID_TAKEN);
      return group;
    });
  }

  async remove(communityId: string, ref: RecordRef, expectedVersion?: string | null): Promise<boolean> {
    const where = refWhere(ref);
    if (expectedVersion != null) {
      return transaction(this.em, async (em) => {
        const { id } = await this.read(communityId, ref, em);
        await assertVersion(em, 'groups', id, expectedVersion);
        await em.nativeDelete(Group, { id, communityId });
        return true;
      });
    }
    const deleted = where ? await this.em.nativeDelete(Group, { ...where, communityId }) : 0;
    if (!deleted) throw notFound('Group');
    return true;
  }

  async setState(communityId: string, ref: RecordRef, state: GroupState): Promise<Group> {
    const group = await this.find(communityId, ref);
    group.state = state;
    await this.em.flush(); // a write (and a new modifiedAt) only when the state changes
    return group;
  }
}
