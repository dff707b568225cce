import { Migration } from '@mikro-orm/migrations';

/**
 * The members holding any of a list of addresses, through members_community_email_unique.
 * `lower(email_address) = any(...)` is not leakproof (`lower()`), so under row-level security
 * it was checked after the policy and never became an index condition: every member create
 * (the 409 check of its externalId and address) and every import batch (the addresses of its
 * 1,000 rows) read each member of the community, 57 ms at 200,000 members and growing with
 * them (docs/performance.md, "Cost does not grow with the data"). As `member_ids_by_email`
 * (Migration20261125070000): the index work runs with the owner's rights (SECURITY DEFINER, a
 * fixed search_path), and the function checks the community itself, exactly as the policies
 * do (`search_allowed`); any other call returns no row.
 */
export class Migration20261128220000_member_email_holders extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create function member_email_holders(community uuid, addresses text[]) returns table (external_id varchar, email text)
        language sql stable security definer rows 10 set search_path = pg_catalog, public
        as $$ select m.external_id, lower(m.email_address) from public.members m
               where m.community_id = community and lower(m.email_address) = any(addresses)
                 and public.search_allowed(community) $$;

      revoke execute on function member_email_holders(uuid, text[]) from public;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop function member_email_holders(uuid, text[]);');
  }
}
