import { leanFindOne, leanPage } from '../../db/lean';
import type { EntityManager } from '@mikro-orm/postgresql';
import { pageWindow, type Page } from '../../common/pagination';
import { refWhere, type RecordRef } from '../../common/ref';
import { mapUnique } from '../../common/unique';
import { GROUP } from '../../common/rules';
import { Checks } from '../../common/validate';
import { notFound } from '../../errors/app-error';
import { Group, GroupState } from './group.entity';
import type { CreateGroupInput, GroupListArgs, UpdateGroupInput } from './group.inputs';

/** Exported: group imports check their rows with the same rules (modules/imports). */
export function checkInput(input: CreateGroupInput | UpdateGroupInput): void {
  new Checks(['input'])
    .string('externalId', input.externalId, GROUP.externalId)
    .string('name', input.name, GROUP.name)
    .string('about', input.about, GROUP.about)
    .string('color', input.color, GROUP.color)
    .nullable('isVisibleInApp', input.isVisibleInApp, GROUP.isVisibleInApp)
    .done();
}

const EXTERNAL_ID_TAKEN = {
  groups_community_external_id_unique: { path: ['input', 'externalId'], detail: 'externalId is already used by another group' },
};

export class GroupService {
  constructor(private readonly em: EntityManager) {}

  async list(communityId: string, args: GroupListArgs): Promise<Page<Group>> {
    return leanPage(this.em, Group, { communityId }, pageWindow(args));
  }

  /** 404, not 403, for another community's group: do not reveal that it exists. */
  async get(communityId: string, ref: RecordRef, lean = false): Promise<Group> {
    const where = refWhere(ref);
    let group: Group | null = null;
    if (where) group = lean ? await leanFindOne(this.em, Group, { ...where, communityId }) : await this.em.findOne(Group, { ...where, communityId });
    if (!group) throw notFound('Group');
    return group;
  }

  /** The read path: a plain row, no entity to track. */
  read(communityId: string, ref: RecordRef): Promise<Group> {
    return this.get(communityId, ref, true);
  }

  async create(communityId: string, input: CreateGroupInput): Promise<Group> {
    checkInput(input);
    const group = this.em.create(Group, {
      communityId,
      externalId: input.externalId ?? null,
      name: input.name,
      about: input.about ?? null,
      color: input.color ?? null,
      isVisibleInApp: input.isVisibleInApp ?? true,
    });
    await mapUnique(() => this.em.flush(), EXTERNAL_ID_TAKEN);
    return group;
  }

  async update(communityId: string, ref: RecordRef, input: UpdateGroupInput): Promise<Group> {
    checkInput(input);
    const group = await this.get(communityId, ref);
    const fields = ['externalId', 'name', 'about', 'color', 'isVisibleInApp'] as const;
    let changed = false;
    for (const field of fields) {
      const value = input[field];
      if (value !== undefined && group[field] !== value) {
        (group as unknown as Record<string, unknown>)[field] = value;
        changed = true;
      }
    }
    if (changed) {
      group.modifiedAt = new Date();
      await mapUnique(() => this.em.flush(), EXTERNAL_ID_TAKEN);
    }
    return group;
  }

  async remove(communityId: string, ref: RecordRef): Promise<boolean> {
    const where = refWhere(ref);
    const deleted = where ? await this.em.nativeDelete(Group, { ...where, communityId }) : 0;
    if (!deleted) throw notFound('Group');
    return true;
  }

  async setState(communityId: string, ref: RecordRef, state: GroupState): Promise<Group> {
    const group = await this.get(communityId, ref);
    if (group.state !== state) {
      group.state = state;
      group.modifiedAt = new Date();
      await this.em.flush();
    }
    return group;
  }
}
