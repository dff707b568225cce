import { describe, expect, it } from 'vitest';
import { GroupService } from '../../../src/modules/groups/group.service';
import { GroupState } from '../../../src/modules/groups/group.entity';
import { expectAppError, useServiceDb } from '../../helpers/service';

/** The group rules at the service, each test in a rolled-back transaction (test/helpers/service.ts). */
const db = useServiceDb();
const groups = () => new GroupService(db.em);

describe('GroupService rules', () => {
  it('creates a group with the defaults the entity declares', async () => {
    const group = await groups().create(db.communityId, { name: 'Choir', externalId: 'choir' });
    expect(group).toMatchObject({ name: 'Choir', externalId: 'choir', state: GroupState.ORIGINAL, communityId: db.communityId });
    const read = await groups().read(db.communityId, { externalId: 'choir' });
    expect(read.id).toBe(group.id);
  });

  it('rejects an empty name and a malformed externalId, naming both fields', async () => {
    const error = await expectAppError(groups().create(db.communityId, { name: '', externalId: 'not valid!' }), 'VALIDATION', [
      ['input', 'name'],
      ['input', 'externalId'],
    ]);
    expect(error.issues.every((i) => i.detail.length > 0)).toBe(true);
  });

  it('rejects an update that would empty the name, and changes nothing', async () => {
    const group = await groups().create(db.communityId, { name: 'Choir' });
    await expectAppError(groups().update(db.communityId, { id: group.id }, { name: '' }), 'VALIDATION', [['input', 'name']]);
    expect((await groups().read(db.communityId, { id: group.id })).name).toBe('Choir');
  });

  it('allows one externalId per community: a second group with it is a CONFLICT on input.externalId', async () => {
    const other = await db.newCommunity();
    await groups().create(other, { name: 'Elsewhere', externalId: 'choir' }); // another community: no clash
    await groups().create(db.communityId, { name: 'Choir', externalId: 'choir' });
    const error = await expectAppError(groups().create(db.communityId, { name: 'Choir 2', externalId: 'choir' }), 'CONFLICT', [
      ['input', 'externalId'],
    ]);
    expect(error.issues[0].detail).toBe('externalId is already used by another group');
  });

  it('answers NOT_FOUND for an unknown id, a non-UUID id and another community\'s group', async () => {
    const other = await db.newCommunity();
    const theirs = await groups().create(other, { name: 'Theirs' });
    await expectAppError(groups().read(db.communityId, { id: '0190c0de-0000-7000-8000-000000000000' }), 'NOT_FOUND');
    await expectAppError(groups().read(db.communityId, { id: 'not-a-uuid' }), 'NOT_FOUND');
    await expectAppError(groups().read(db.communityId, { id: theirs.id }), 'NOT_FOUND');
    await expectAppError(groups().update(db.communityId, { id: theirs.id }, { name: 'Mine now' }), 'NOT_FOUND');
  });
});
