import { Migration20261124000000_baseline } from './Migration20261124000000_baseline';

/**
 * Applied in this order at start-up; add new migrations at the end. Each is literal SQL and
 * imports nothing but `@mikro-orm/migrations`; a committed migration never changes.
 */
export const migrationsList = [{ name: 'Migration20261124000000_baseline', class: Migration20261124000000_baseline }];
