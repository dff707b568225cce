import { Migration20261122000000_foundation } from './Migration20261122000000_foundation';
import { Migration20261122010000_members } from './Migration20261122010000_members';

/** Applied in this order at start-up; add new migrations at the end. */
export const migrationsList = [
  { name: 'Migration20261122000000_foundation', class: Migration20261122000000_foundation },
  { name: 'Migration20261122010000_members', class: Migration20261122010000_members },
];
