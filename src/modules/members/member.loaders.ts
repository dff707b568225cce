import DataLoader from 'dataloader';
import { preparedRows } from '../../db/prepared';
import { anyOf, arrayOf } from '../../db/sql';
import { rowsById, type LoaderFactory } from '../../loaders';
import { Member, type MemberFieldValueView } from './member.entity';

/** Member by id, as a plain row: the one member loader (memberships, notification deliveries). */
export const memberById = rowsById(Member);

/**
 * Member id -> its additional field values: every value of a batch of members in one
 * statement, ordered like the fields (orderNumber). Joined to the members of the caller's
 * community only.
 */
export const memberFieldValues: LoaderFactory<DataLoader<string, MemberFieldValueView[]>> = ({ em, communityId }) =>
  new DataLoader(async (memberIds) => {
    // A named statement (src/db/prepared.ts): parsed and planned once per connection, not per page.
    const rows = await preparedRows<MemberFieldValueView>(
      em,
      `select v.member_id as "memberId", v.field_id as "id", v.value
         from member_field_values v
         join members m on m.id = v.member_id
         join additional_fields f on f.id = v.field_id
        where m.community_id = ? and v.member_id = ${anyOf('uuid')}
        order by f.order_number, f.created_at, f.id`,
      [communityId, arrayOf(memberIds)],
    );
    const byMember = new Map<string, MemberFieldValueView[]>(memberIds.map((id) => [id, []]));
    for (const row of rows) byMember.get(row.memberId)?.push(row);
    return memberIds.map((id) => byMember.get(id) ?? []);
  });
