import { describe, expect, it } from 'vitest';
import { GroupService } from '../../../src/modules/groups/group.service';
import { MemberService } from '../../../src/modules/members/member.service';
import { GroupMembershipService as MembershipService } from '../../../src/modules/memberships/membership.service';
import { expectAppError, useServiceDb } from '../../helpers/service';

/** The membership rules at the service, each test in a rolled-back transaction (test/helpers/service.ts). */
const db = useServiceDb();
const memberships = () => new MembershipService(db.em);

/** A group and two members of the test's community. */
async function setup(communityId = db.communityId) {
  const group = await new GroupService(db.em).create(communityId, { name: 'Choir', externalId: 'choir' });
  const grace = await new MemberService(db.em).create(communityId, { externalId: 'grace', firstName: 'Grace' });
  const alan = await new MemberService(db.em).create(communityId, { externalId: 'alan', firstName: 'Alan' });
  return { group, grace, alan };
}

describe('MembershipService rules', () => {
  it('appends memberships in order, by memberId or memberExternalId', async () => {
    const { group, grace, alan } = await setup();
    const first = await memberships().create(db.communityId, { id: group.id }, { memberId: grace.id });
    const second = await memberships().create(db.communityId, { externalId: 'choir' }, { memberExternalId: 'alan', title: 'Bass' });
    expect([first.memberId, second.memberId]).toEqual([grace.id, alan.id]);
    expect(second.orderNumber).toBe(first.orderNumber + 1);
  });

  it('needs a member, of this community, and a valid externalId', async () => {
    const { group } = await setup();
    const theirs = await new MemberService(db.em).create(await db.newCommunity(), { firstName: 'Theirs' });
    await expectAppError(memberships().create(db.communityId, { id: group.id }, {}), 'VALIDATION', [['input', 'memberId']]);
    await expectAppError(memberships().create(db.communityId, { id: group.id }, { memberId: theirs.id }), 'VALIDATION', [['input', 'memberId']]);
    await expectAppError(
      memberships().create(db.communityId, { id: group.id }, { memberExternalId: 'grace', externalId: 'not valid!' }),
      'VALIDATION',
      [['input', 'externalId']],
    );
  });

  it('rejects a batch naming one member twice, pointing at the second item, and saves none', async () => {
    const { group, grace } = await setup();
    const error = await expectAppError(
      memberships().createMany(db.communityId, { id: group.id }, { groupMemberships: [{ memberId: grace.id }, { memberExternalId: 'grace' }] }),
      'VALIDATION',
      [['input', 'groupMemberships', 1, 'memberExternalId']],
    );
    expect(error.issues[0].detail).toBe('the member is already listed at index 0 of this request');
    const page = await memberships().list(db.communityId, { id: group.id }, {});
    expect(page.results).toHaveLength(0);
  });

  it('lets a member belong to a group once, and a membership externalId be used once per group', async () => {
    const { group, grace, alan } = await setup();
    await memberships().create(db.communityId, { id: group.id }, { memberId: grace.id, externalId: 'm-1' });
    const error = await expectAppError(memberships().create(db.communityId, { id: group.id }, { memberId: grace.id }), 'CONFLICT', [
      ['input', 'memberId'],
    ]);
    expect(error.issues[0].detail).toBe('the member already belongs to this group');
    await expectAppError(memberships().create(db.communityId, { id: group.id }, { memberId: alan.id, externalId: 'm-1' }), 'CONFLICT', [
      ['input', 'externalId'],
    ]);
  });

  it("answers NOT_FOUND for another community's group and an unknown membership", async () => {
    const { group } = await setup();
    const theirs = await setup(await db.newCommunity());
    await expectAppError(memberships().create(db.communityId, { id: theirs.group.id }, { memberExternalId: 'grace' }), 'NOT_FOUND');
    await expectAppError(memberships().read(db.communityId, { id: group.id }, { externalId: 'nobody' }), 'NOT_FOUND');
    await expectAppError(memberships().remove(db.communityId, { id: group.id }, { externalId: 'nobody' }), 'NOT_FOUND');
  });
});
