import DataLoader from 'dataloader';
import { preparedRows } from '../../db/prepared';
import { arrayOf } from '../../db/sql';
import { rowsById, type LoaderFactory } from '../../loaders';
import { Member, type MemberFieldValueView } from './member.entity';

/** Member by id, as a plain row: the one member loader (memberships, notification deliveries). */
export const memberById = rowsById(Member);

/**
 * Member id -> its additional field values: every value of a batch of members in one
 * statement, ordered like the fields (orderNumber), of the caller's community only.
 *
 * Driven by the ids, each member's values read through the primary key (member_id, field_id):
 * a lateral subquery kept apart by `offset 0`, so the plan cannot start from the community's
 * members instead. With statistics that described a smaller community (a young database, a
 * community grown since the last ANALYZE) the former join to `members` did, for the whole
 * life of the connection's plan: 3.6 s for a page of 20 in a community of 10,000
 * (docs/performance.md, "Statistics of a growing database").
 */
export const MEMBER_FIELD_VALUES = `select v.member_id as "memberId", v.field_id as "id", v.value
   from unnest(?::uuid[]) as page(id)
   cross join lateral (select v.member_id, v.field_id, v.value from member_field_values v
                        where v.member_id = page.id and v.community_id = ? offset 0) v
   join additional_fields f on f.id = v.field_id
  order by f.order_number, f.created_at, f.id`;

export const memberFieldValues: LoaderFactory<DataLoader<string, MemberFieldValueView[]>> = ({ em, communityId }) =>
  new DataLoader(async (memberIds) => {
    // A named statement (src/db/prepared.ts): parsed and planned once per connection, not per page.
    const rows = await preparedRows<MemberFieldValueView>(em, MEMBER_FIELD_VALUES, [arrayOf(memberIds), communityId]);
    const byMember = new Map<string, MemberFieldValueView[]>(memberIds.map((id) => [id, []]));
    for (const row of rows) byMember.get(row.memberId)?.push(row);
    return memberIds.map((id) => byMember.get(id) ?? []);
  });
