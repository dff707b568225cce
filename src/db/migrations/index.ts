import { Migration20261124000000_baseline } from './Migration20261124000000_baseline';
import { Migration20261124100000_search } from './Migration20261124100000_search';
import { Migration20261124200000_webhook_secret_sealing } from './Migration20261124200000_webhook_secret_sealing';
import { Migration20261124210000_api_key_lifecycle } from './Migration20261124210000_api_key_lifecycle';
import { Migration20261124300000_tenant_keys } from './Migration20261124300000_tenant_keys';
import { Migration20261124400000_row_level_security } from './Migration20261124400000_row_level_security';
import { Migration20261125050000_memberships_community_first } from './Migration20261125050000_memberships_community_first';
import { Migration20261125060000_leaner_writes } from './Migration20261125060000_leaner_writes';
import { Migration20261125070000_search_under_row_security } from './Migration20261125070000_search_under_row_security';
import { Migration20261125080000_field_value_digest } from './Migration20261125080000_field_value_digest';
import { Migration20261125090000_search_rows } from './Migration20261125090000_search_rows';
import { Migration20261125100000_member_text_index } from './Migration20261125100000_member_text_index';
import { Migration20261125110000_field_value_order } from './Migration20261125110000_field_value_order';
import { Migration20261125120000_member_text_one_test } from './Migration20261125120000_member_text_one_test';
import { Migration20261125130000_member_search_text } from './Migration20261125130000_member_search_text';
import { Migration20261128010000_member_search_walk } from './Migration20261128010000_member_search_walk';
import { Migration20261128020000_member_search_custom_plan } from './Migration20261128020000_member_search_custom_plan';
import { Migration20261128030000_member_search_fallback_planned } from './Migration20261128030000_member_search_fallback_planned';
import { Migration20261128220000_member_email_holders } from './Migration20261128220000_member_email_holders';

/**
 * Applied in this order at start-up; add new migrations at the end. Each is literal SQL and
 * imports nothing but `@mikro-orm/migrations`; a committed migration never changes.
 */
export const migrationsList = [
  { name: 'Migration20261124000000_baseline', class: Migration20261124000000_baseline },
  { name: 'Migration20261124100000_search', class: Migration20261124100000_search },
  { name: 'Migration20261124200000_webhook_secret_sealing', class: Migration20261124200000_webhook_secret_sealing },
  { name: 'Migration20261124210000_api_key_lifecycle', class: Migration20261124210000_api_key_lifecycle },
  { name: 'Migration20261124300000_tenant_keys', class: Migration20261124300000_tenant_keys },
  { name: 'Migration20261124400000_row_level_security', class: Migration20261124400000_row_level_security },
  { name: 'Migration20261125050000_memberships_community_first', class: Migration20261125050000_memberships_community_first },
  { name: 'Migration20261125060000_leaner_writes', class: Migration20261125060000_leaner_writes },
  { name: 'Migration20261125070000_search_under_row_security', class: Migration20261125070000_search_under_row_security },
  { name: 'Migration20261125080000_field_value_digest', class: Migration20261125080000_field_value_digest },
  { name: 'Migration20261125090000_search_rows', class: Migration20261125090000_search_rows },
  { name: 'Migration20261125100000_member_text_index', class: Migration20261125100000_member_text_index },
  { name: 'Migration20261125110000_field_value_order', class: Migration20261125110000_field_value_order },
  { name: 'Migration20261125120000_member_text_one_test', class: Migration20261125120000_member_text_one_test },
  { name: 'Migration20261125130000_member_search_text', class: Migration20261125130000_member_search_text },
  { name: 'Migration20261128010000_member_search_walk', class: Migration20261128010000_member_search_walk },
  { name: 'Migration20261128020000_member_search_custom_plan', class: Migration20261128020000_member_search_custom_plan },
  { name: 'Migration20261128030000_member_search_fallback_planned', class: Migration20261128030000_member_search_fallback_planned },
  { name: 'Migration20261128220000_member_email_holders', class: Migration20261128220000_member_email_holders },
];
