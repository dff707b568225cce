import { Migration20261122000000_foundation } from './Migration20261122000000_foundation';
import { Migration20261122010000_members } from './Migration20261122010000_members';
import { Migration20261122020000_jobs } from './Migration20261122020000_jobs';
import { Migration20261122030000_worker_heartbeats } from './Migration20261122030000_worker_heartbeats';
import { Migration20261122120000_text_sort } from './Migration20261122120000_text_sort';
import { Migration20261122130000_modified_since } from './Migration20261122130000_modified_since';
import { Migration20261122131000_idempotency_keys } from './Migration20261122131000_idempotency_keys';
import { Migration20261122131100_idempotency_headers } from './Migration20261122131100_idempotency_headers';
import { Migration20261122140000_events } from './Migration20261122140000_events';
import { Migration20261122150000_events_direct } from './Migration20261122150000_events_direct';
import { Migration20261123000000_events_lean } from './Migration20261123000000_events_lean';
import { Migration20261123010000_event_snapshots } from './Migration20261123010000_event_snapshots';
import { Migration20261124100000_search } from './Migration20261124100000_search';

/** Applied in this order at start-up; add new migrations at the end. */
export const migrationsList = [
  { name: 'Migration20261122000000_foundation', class: Migration20261122000000_foundation },
  { name: 'Migration20261122010000_members', class: Migration20261122010000_members },
  { name: 'Migration20261122020000_jobs', class: Migration20261122020000_jobs },
  { name: 'Migration20261122030000_worker_heartbeats', class: Migration20261122030000_worker_heartbeats },
  { name: 'Migration20261122120000_text_sort', class: Migration20261122120000_text_sort },
  { name: 'Migration20261122130000_modified_since', class: Migration20261122130000_modified_since },
  { name: 'Migration20261122131000_idempotency_keys', class: Migration20261122131000_idempotency_keys },
  { name: 'Migration20261122131100_idempotency_headers', class: Migration20261122131100_idempotency_headers },
  { name: 'Migration20261122140000_events', class: Migration20261122140000_events },
  { name: 'Migration20261122150000_events_direct', class: Migration20261122150000_events_direct },
  { name: 'Migration20261123000000_events_lean', class: Migration20261123000000_events_lean },
  { name: 'Migration20261123010000_event_snapshots', class: Migration20261123010000_event_snapshots },
  { name: 'Migration20261124100000_search', class: Migration20261124100000_search },
];
