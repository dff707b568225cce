import { Migration } from '@mikro-orm/migrations';

/**
 * Notifications (with their recipients and deliveries) and import jobs. The job queue's
 * own tables live in the `graphile_worker` schema, created by graphile-worker's migrations
 * at start (src/jobs/queue.ts), so they are not part of this migration.
 */
export class Migration20261122020000_jobs extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table notifications (
        id uuid primary key,
        community_id uuid not null references communities (id) on delete cascade,
        title varchar(256) not null,
        message text not null,
        status text not null default 'SCHEDULED' check (status in ('SCHEDULED', 'SENT', 'CANCELLED')),
        receivers_count integer not null check (receivers_count >= 0),
        send_at timestamptz(3) not null,
        sent_at timestamptz(3) null,
        cancelled_at timestamptz(3) null,
        created_at timestamptz(3) not null,
        modified_at timestamptz(3) not null
      );
      create index notifications_community_created_idx on notifications (community_id, created_at, id);

      -- Who a notification is for, fixed when it is created; deleting a member removes it here.
      create table notification_recipients (
        notification_id uuid not null references notifications (id) on delete cascade,
        member_id uuid not null references members (id) on delete cascade,
        primary key (notification_id, member_id)
      );
      create index notification_recipients_member_idx on notification_recipients (member_id);

      -- The unique pair is the last line of defence for "sent exactly once".
      create table notification_deliveries (
        id uuid primary key,
        notification_id uuid not null references notifications (id) on delete cascade,
        member_id uuid not null references members (id) on delete cascade,
        delivered_at timestamptz(3) not null,
        constraint notification_deliveries_notification_member_unique unique (notification_id, member_id)
      );
      create index notification_deliveries_member_idx on notification_deliveries (member_id);

      create table import_jobs (
        id uuid primary key,
        community_id uuid not null references communities (id) on delete cascade,
        kind text not null check (kind in ('GROUPS', 'MEMBERS')),
        status text not null default 'QUEUED' check (status in ('QUEUED', 'RUNNING', 'COMPLETED', 'FAILED')),
        payload jsonb null,
        total integer not null check (total >= 0),
        processed integer not null default 0 check (processed >= 0 and processed <= total),
        created integer not null default 0,
        updated integer not null default 0,
        unchanged integer not null default 0,
        failed integer not null default 0,
        memberships_created integer not null default 0,
        failure_reason text null,
        started_at timestamptz(3) null,
        finished_at timestamptz(3) null,
        created_at timestamptz(3) not null,
        modified_at timestamptz(3) not null
      );
      create index import_jobs_community_created_idx on import_jobs (community_id, created_at, id);

      create table import_job_errors (
        id bigint generated always as identity primary key,
        import_job_id uuid not null references import_jobs (id) on delete cascade,
        row_number integer not null check (row_number >= 1),
        field text null,
        detail text not null
      );
      create index import_job_errors_job_row_idx on import_job_errors (import_job_id, row_number, id);
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`
      drop table import_job_errors; drop table import_jobs;
      drop table notification_deliveries; drop table notification_recipients; drop table notifications;
    `);
  }
}
