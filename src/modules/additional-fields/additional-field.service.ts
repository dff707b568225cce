import { transaction } from '../../db/transaction';
import { assertVersion } from '../../db/version';
import { leanFindOne, leanPage } from '../../db/lean';
import { wrap } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isId } from '../../common/ids';
import { pageWindow, type Page } from '../../common/pagination';
import { ADDITIONAL_FIELD as F, MAX_ORDER_NUMBER } from '../../common/rules';
import { Checks } from '../../common/validate';
import { notFound, orNotFound } from '../../errors/app-error';
import { AdditionalField } from './additional-field.entity';
import type {
  AdditionalFieldListArgs,
  AdditionalFieldRef,
  CreateAdditionalFieldInput,
  IconInput,
  UpdateAdditionalFieldInput,
} from './additional-field.inputs';

export { MAX_ORDER_NUMBER };

function checkInput(input: CreateAdditionalFieldInput | UpdateAdditionalFieldInput): void {
  const checks = new Checks()
    .string('name', input.name, F.name)
    .string('placeholder', input.placeholder, F.placeholder)
    .nullable('isEditableByMember', input.isEditableByMember, F.isEditableByMember)
    .nullable('isMandatoryForMember', input.isMandatoryForMember, F.isMandatoryForMember)
    .nullable('isVisibleInApp', input.isVisibleInApp, F.isVisibleInApp)
    .int('orderNumber', input.orderNumber, F.orderNumber);
  if (input.icon && !F.unicode.pattern!.test(input.icon.unicode)) checks.add(['icon', 'unicode'], 'icon.unicode must be 1-6 hexadecimal digits');
  checks.done(['input']);
}

function iconColumns(icon: IconInput | null | undefined) {
  if (icon === undefined) return {};
  return { iconStyle: icon?.style ?? null, iconUnicode: icon?.unicode ?? null };
}

export class AdditionalFieldService {
  constructor(private readonly em: EntityManager) {}

  async list(communityId: string, args: AdditionalFieldListArgs): Promise<Page<AdditionalField>> {
    return leanPage(this.em, AdditionalField, { communityId }, pageWindow(args));
  }

  /** For output: a plain row. 404, not 403, for another community's field; a non-UUID id matches nothing. */
  async read(communityId: string, ref: AdditionalFieldRef): Promise<AdditionalField> {
    return orNotFound(isId(ref.id) && (await leanFindOne(this.em, AdditionalField, { id: ref.id.toLowerCase(), communityId })), 'Additional field');
  }

  /** The entity, to change it (no lock: writers serialise on the order lock), in em (the caller's transaction when given). */
  async find(communityId: string, ref: AdditionalFieldRef, em = this.em): Promise<AdditionalField> {
    return orNotFound(isId(ref.id) && (await em.findOne(AdditionalField, { id: ref.id, communityId })), 'Additional field');
  }

  async create(communityId: string, input: CreateAdditionalFieldInput): Promise<AdditionalField> {
    checkInput(input);
    return transaction(this.em, async (em) => {
      await lockOrder(em, communityId);
      const orderNumber = input.orderNumber ?? (await nextOrderNumber(em, communityId));
      if (input.orderNumber != null) await makeRoom(em, communityId, orderNumber, null);
      const now = new Date(); // one instant: the entity's two defaults could straddle a millisecond
      const field = em.create(AdditionalField, {
        communityId,
        createdAt: now,
        modifiedAt: now,
        name: input.name,
        placeholder: input.placeholder ?? null,
        type: input.type,
        ...iconColumns(input.icon),
        isEditableByMember: input.isEditableByMember ?? true,
        isMandatoryForMember: input.isMandatoryForMember ?? false,
        isVisibleInApp: input.isVisibleInApp ?? true,
        orderNumber,
      });
      await em.flush();
      return field;
    });
  }

  async update(communityId: string, ref: AdditionalFieldRef, input: UpdateAdditionalFieldInput, expectedVersion?: string | null): Promise<AdditionalField> {
    checkInput(input);
    return transaction(this.em, async (em) => {
      await lockOrder(em, communityId);
      const field = await this.find(communityId, ref, em);
      await assertVersion(em, 'additional_fields', field.id, expectedVersion);
      const moved = input.orderNumber != null && input.orderNumber !== field.orderNumber;
      // PATCH: absent fields stay (checkInput rejected null for the non-nullable ones); MikroORM
      // writes only what changed and then sets modifiedAt.
      const { icon, ...fields } = input;
      wrap(field).assign({ ...fields, ...iconColumns(icon) }, { ignoreUndefined: true });
      if (moved) await makeRoom(em, communityId, field.orderNumber, field.id);
      await em.flush();
      return field;
    });
  }

  /** Members' values of the field go with it (foreign key cascade). */
  async remove(communityId: string, ref: AdditionalFieldRef, expectedVersion?: string | null): Promise<boolean> {
    if (expectedVersion != null) {
      return transaction(this.em, async (em) => {
        const field = await this.find(communityId, ref, em);
        await assertVersion(em, 'additional_fields', field.id, expectedVersion);
        await em.nativeDelete(AdditionalField, { id: field.id, communityId });
        return true;
      });
    }
    const deleted = isId(ref.id) ? await this.em.nativeDelete(AdditionalField, { id: ref.id, communityId }) : 0;
    if (!deleted) throw notFound('Additional field');
    return true;
  }
}

/** Serialises order-number writes per community, so two writers never compute the same maximum or shift twice. */
async function lockOrder(em: EntityManager, communityId: string): Promise<void> {
  await em.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`additional_fields:order:${communityId}`]);
}

async function nextOrderNumber(em: EntityManager, communityId: string): Promise<number> {
  const [row] = await em.execute<{ next: number }[]>(
    'select coalesce(max(order_number), 0) + 1 as next from additional_fields where community_id = ?',
    [communityId],
  );
  return Number(row.next);
}

/**
 * When another field already has `orderNumber`, it and every field above it move back
 * by one (one set-based statement); an unused number shifts nothing.
 */
async function makeRoom(em: EntityManager, communityId: string, orderNumber: number, selfId: string | null): Promise<void> {
  const self = selfId ?? '00000000-0000-0000-0000-000000000000';
  await em.execute(
    `update additional_fields set order_number = order_number + 1, modified_at = ?
      where community_id = ? and order_number >= ? and id <> ?
        and exists (select 1 from additional_fields
                     where community_id = ? and order_number = ? and id <> ?)`,
    [new Date(), communityId, orderNumber, self, communityId, orderNumber, self],
  );
}
