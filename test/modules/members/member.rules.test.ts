import { describe, expect, it } from 'vitest';
import { AdditionalFieldType } from '../../../src/modules/additional-fields/additional-field.entity';
import { AdditionalFieldService } from '../../../src/modules/additional-fields/additional-field.service';
import { MemberService } from '../../../src/modules/members/member.service';
import { expectAppError, useServiceDb } from '../../helpers/service';

/** The member rules at the service, each test in a rolled-back transaction (test/helpers/service.ts). */
const db = useServiceDb();
const members = () => new MemberService(db.em);

describe('MemberService rules', () => {
  it('needs at least one identity field', async () => {
    await expectAppError(members().create(db.communityId, {}), 'VALIDATION', [['input']]);
    const grace = await members().create(db.communityId, { emailAddress: 'grace@example.com' });
    const error = await expectAppError(members().update(db.communityId, { id: grace.id }, { emailAddress: null }), 'VALIDATION', [['input']]);
    expect(error.issues[0].detail).toMatch(/at least one of/);
  });

  it('rejects a malformed emailAddress, naming the field', async () => {
    await expectAppError(members().create(db.communityId, { firstName: 'Grace', emailAddress: 'not an address' }), 'VALIDATION', [
      ['input', 'emailAddress'],
    ]);
  });

  it('rejects a value for an additional field of another community', async () => {
    const other = await db.newCommunity();
    const theirs = await new AdditionalFieldService(db.em).create(other, { name: 'Shoe size', type: AdditionalFieldType.TEXT });
    await expectAppError(
      members().create(db.communityId, { firstName: 'Grace', additionalFields: [{ id: theirs.id, value: '38' }] }),
      'VALIDATION',
      [['input', 'additionalFields', 0, 'id']],
    );
  });

  it('keeps emailAddress unique in the community regardless of case, and externalId unique', async () => {
    await members().create(db.communityId, { externalId: 'grace', emailAddress: 'Grace@Example.com' });
    const error = await expectAppError(members().create(db.communityId, { externalId: 'grace', emailAddress: 'grace@example.COM' }), 'CONFLICT', [
      ['input', 'externalId'],
      ['input', 'emailAddress'],
    ]);
    expect(error.issues.map((i) => i.detail).sort()).toEqual([
      'emailAddress is already used by another member',
      'externalId is already used by another member',
    ]);
    // another community may use both
    await members().create(await db.newCommunity(), { externalId: 'grace', emailAddress: 'grace@example.com' });
  });

  it("answers NOT_FOUND for an unknown member and another community's member", async () => {
    const theirs = await members().create(await db.newCommunity(), { firstName: 'Theirs' });
    await expectAppError(members().read(db.communityId, { id: theirs.id }), 'NOT_FOUND');
    await expectAppError(members().read(db.communityId, { externalId: 'nobody' }), 'NOT_FOUND');
    await expectAppError(members().update(db.communityId, { id: theirs.id }, { firstName: 'Mine' }), 'NOT_FOUND');
    await expectAppError(members().remove(db.communityId, { id: theirs.id }), 'NOT_FOUND');
    expect((await members().read(theirs.communityId, { id: theirs.id })).firstName).toBe('Theirs');
  });
});
