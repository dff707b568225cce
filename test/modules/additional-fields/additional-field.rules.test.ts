import { describe, expect, it } from 'vitest';
import { AdditionalFieldType, IconStyle } from '../../../src/modules/additional-fields/additional-field.entity';
import { AdditionalFieldService } from '../../../src/modules/additional-fields/additional-field.service';
import { expectAppError, useServiceDb } from '../../helpers/service';

/** The additional field rules at the service, each test in a rolled-back transaction (test/helpers/service.ts). */
const db = useServiceDb();
const fields = () => new AdditionalFieldService(db.em);
const TEXT = AdditionalFieldType.TEXT;

/** The fields of the test's community by name, in order. */
async function order(): Promise<[string, number][]> {
  const page = await fields().list(db.communityId, { limit: 100 });
  return page.results.map((f) => [f.name, f.orderNumber] as [string, number]).sort((a, b) => a[1] - b[1]);
}

describe('AdditionalFieldService rules', () => {
  it('creates with the declared defaults and the next order number', async () => {
    const size = await fields().create(db.communityId, { name: 'Shoe size', type: TEXT });
    expect(size).toMatchObject({ isEditableByMember: true, isMandatoryForMember: false, isVisibleInApp: true, orderNumber: 1 });
    expect((await fields().create(db.communityId, { name: 'Allergies', type: TEXT })).orderNumber).toBe(2);
  });

  it('rejects an empty name, a null flag, a negative orderNumber and a bad icon, naming each field', async () => {
    await expectAppError(
      fields().create(db.communityId, {
        name: '',
        type: TEXT,
        isEditableByMember: null,
        orderNumber: -1,
        icon: { style: IconStyle.SOLID, unicode: 'xyz' },
      }),
      'VALIDATION',
      [
        ['input', 'name'],
        ['input', 'isEditableByMember'],
        ['input', 'orderNumber'],
        ['input', 'icon', 'unicode'],
      ],
    );
  });

  it('keeps order numbers unique: a number in use pushes that field and those above it back by one', async () => {
    await fields().create(db.communityId, { name: 'A', type: TEXT });
    await fields().create(db.communityId, { name: 'B', type: TEXT });
    await fields().create(db.communityId, { name: 'C', type: TEXT, orderNumber: 1 });
    expect(await order()).toEqual([
      ['C', 1],
      ['A', 2],
      ['B', 3],
    ]);
    await fields().create(db.communityId, { name: 'D', type: TEXT, orderNumber: 10 }); // an unused number shifts nothing
    expect((await order()).map(([, n]) => n)).toEqual([1, 2, 3, 10]);
  });

  it("answers NOT_FOUND for an unknown id, a non-UUID id and another community's field", async () => {
    const theirs = await fields().create(await db.newCommunity(), { name: 'Theirs', type: TEXT });
    await expectAppError(fields().read(db.communityId, { id: theirs.id }), 'NOT_FOUND');
    await expectAppError(fields().read(db.communityId, { id: 'not-a-uuid' }), 'NOT_FOUND');
    await expectAppError(fields().update(db.communityId, { id: theirs.id }, { name: 'Mine' }), 'NOT_FOUND');
    await expectAppError(fields().remove(db.communityId, { id: theirs.id }), 'NOT_FOUND');
    expect((await fields().read(theirs.communityId, { id: theirs.id })).name).toBe('Theirs');
  });
});
