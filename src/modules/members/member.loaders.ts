import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AdditionalField } from '../additional-fields/additional-field.entity';
import { MemberFieldValue } from './member.entity';
import { jsonList } from './member-values';

/** Loaders of the members module; built per request for one community (see src/loaders.ts). */
export interface MemberLoaders {
  /** Member id -> its additional field values. */
  fieldValues: DataLoader<string, MemberFieldValue[]>;
  additionalField: DataLoader<string, AdditionalField | undefined>;
}

export function createMemberLoaders(em: EntityManager, communityId: string): MemberLoaders {
  return { fieldValues: memberFieldValuesLoader(em, communityId), additionalField: additionalFieldLoader(em, communityId) };
}

function additionalFieldLoader(em: EntityManager, communityId: string) {
  return new DataLoader<string, AdditionalField | undefined>(async (ids) => {
    const rows = await em.find(AdditionalField, { id: { $in: [...ids] }, communityId });
    const byId = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => byId.get(id));
  });
}

/**
 * Per-request loader: every value of a batch of members in one statement, ordered like
 * the fields (orderNumber). Joined to the members of the caller's community only.
 */
function memberFieldValuesLoader(em: EntityManager, communityId: string) {
  return new DataLoader<string, MemberFieldValue[]>(async (memberIds) => {
    const rows = await em.execute<{ memberId: string; fieldId: string; value: string }[]>(
      `select v.member_id as "memberId", v.field_id as "fieldId", v.value
         from member_field_values v
         join members m on m.id = v.member_id
         join additional_fields f on f.id = v.field_id
        where m.community_id = ? and v.member_id in (select jsonb_array_elements_text(?::jsonb)::uuid)
        order by f.order_number, f.created_at, f.id`,
      [communityId, jsonList(memberIds)],
    );
    const byMember = new Map<string, MemberFieldValue[]>(memberIds.map((id) => [id, []]));
    for (const row of rows) byMember.get(row.memberId)?.push(Object.assign(new MemberFieldValue(), row));
    return memberIds.map((id) => byMember.get(id) ?? []);
  });
}
