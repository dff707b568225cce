import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { auditBypass } from '../../db/tenancy';
import type { Logger } from '../../logger';
import { slot } from '../../state';
import { EVENT_COLUMNS, toEvent, type EventRow } from './event.service';
import type { Event } from './event.entity';

export const EVENTS_CHANNEL = 'community_events';
const MAX_SEQ = '9223372036854775807';

interface Subscriber {
  communityId: string;
  /** The last position taken when it subscribed: it gets what commits after. */
  since: bigint;
  types: Set<string>;
  push(event: Event): void;
}

/** How often a hub with subscribers reads without being notified (a notification can be skipped: see below). */
const POLL_MS = 2000;
/** A hub renews its entry in event_listeners this often; the commit trigger ignores entries older than 2 minutes. */
const HEARTBEAT_MS = 30_000;

/**
 * Fans committed events out to this instance's GraphQL subscribers. Every instance with
 * subscribers LISTENs on one PostgreSQL channel and says so in `event_listeners`; the commit
 * trigger NOTIFYs the channel with the transaction's position only while some instance
 * listens (a NOTIFY costs every writing transaction about 25 us, a quarter to a third of the outbox's cost
 * per transaction, so none is sent for nobody). An event committed by any instance thereby
 * reaches the subscribers of every instance. On each notification, and every POLL_MS while it
 * has subscribers, the hub reads every event after the last position it read, in commit
 * order, so coalesced, missed or unsent notifications (a transaction that committed while
 * this hub was registering) delay an event by at most POLL_MS and lose nothing.
 *
 * Why reading "after the last position read" is exact: positions are taken under one lock held
 * until the commit ends, so once a position is visible every smaller one has finished.
 */
export class EventHub {
  private client?: Client;
  private connecting?: Promise<void>;
  /** Every position up to this one was read (or had no subscriber). */
  private lastPosition = 0n;
  /** Within lastPosition + 1, the events up to this seq were read (a transaction of more than one page). */
  private lastSeq = MAX_SEQ;
  private readonly subscribers = new Set<Subscriber>();
  private reading = false;
  private again = false;
  private closed = false;
  private timers: NodeJS.Timeout[] = [];
  private readonly instance = `hub-${randomUUID()}`;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
  ) {}

  private connect(): Promise<void> {
    this.connecting ??= (async () => {
      // Its own connection as the owner: one read serves the subscribers of every community on
      // this instance (each gets its own community's events only, by the filter below): the
      // named bypass, recorded (src/db/tenancy.ts).
      auditBypass('event hub: committed events of the subscribed communities', this.logger);
      const client = new Client({ connectionString: this.databaseUrl });
      client.on('error', (err) => {
        this.logger.warn({ err: err.message }, 'event hub connection lost');
        this.client = undefined;
        this.connecting = undefined;
        this.stopTimers();
        if (this.subscribers.size && !this.closed) setTimeout(() => void this.connect().catch(() => undefined), 1000).unref();
      });
      await client.connect();
      client.on('notification', () => void this.read());
      await client.query(`listen ${EVENTS_CHANNEL}`);
      await this.register(client);
      if (this.lastPosition === 0n) this.lastPosition = await this.position(client);
      this.client = client;
      this.timers = [
        setInterval(() => void this.register(client).catch(() => undefined), HEARTBEAT_MS),
        setInterval(() => {
          if (this.subscribers.size) void this.read();
        }, POLL_MS),
      ];
      for (const t of this.timers) t.unref();
      void this.read(); // what committed while (re)connecting
    })().catch((err) => {
      this.connecting = undefined;
      throw err;
    });
    return this.connecting;
  }

  /** This instance listens: the commit trigger notifies while an entry is younger than 2 minutes. */
  private async register(client: Client): Promise<void> {
    await client.query(
      'insert into event_listeners (instance_id, seen_at) values ($1, now()) on conflict (instance_id) do update set seen_at = excluded.seen_at',
      [this.instance],
    );
  }

  /** The last position taken so far (committed or not yet). */
  private async position(client: Client): Promise<bigint> {
    const { rows } = await client.query<{ p: string }>('select (case when is_called then last_value else 0 end)::text as p from event_positions');
    return BigInt(rows[0].p);
  }

  private stopTimers(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }

  private async read(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        const client = this.client;
        if (!client || !this.subscribers.size) continue;
        const communities = [...new Set([...this.subscribers].map((s) => s.communityId))];
        // Per community, so the primary key of event_commits (community_id, position) serves it.
        const from = this.lastSeq === MAX_SEQ ? this.lastPosition : this.lastPosition + 1n;
        const { rows } = await client.query<EventRow & { community_id: string }>(
          `select ${EVENT_COLUMNS}, c.community_id
             from event_commits c join events e on e.txid = c.txid and e.community_id = c.community_id
            where c.community_id = any($1::uuid[]) and c.position >= $2::bigint and (c.position > $2::bigint or e.seq > $3::bigint)
            order by c.position, e.seq limit 1000`,
          [communities, from.toString(), this.lastSeq],
        );
        for (const row of rows) {
          const event = toEvent(row);
          const position = BigInt(row.position);
          for (const s of this.subscribers) if (s.communityId === row.community_id && s.types.has(row.type) && position > s.since) s.push(event);
        }
        const last = rows[rows.length - 1];
        if (rows.length === 1000) {
          this.lastPosition = BigInt(last.position) - 1n; // continue inside that position, after its last seq read
          this.lastSeq = String(last.seq);
          this.again = true;
        } else if (last) {
          this.lastPosition = BigInt(last.position);
          this.lastSeq = MAX_SEQ;
        } else if (this.lastSeq !== MAX_SEQ) {
          this.lastPosition += 1n; // the rest of that position was read
          this.lastSeq = MAX_SEQ;
        }
      } while (this.again);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'event hub read failed');
    } finally {
      this.reading = false;
    }
  }

  /** Events of `communityId` whose type is in `types`, from now on, until the iterator is returned. */
  async subscribe(communityId: string, types: string[]): Promise<AsyncIterableIterator<Event>> {
    await this.connect();
    const since = this.client ? await this.position(this.client) : this.lastPosition;
    if (!this.subscribers.size) [this.lastPosition, this.lastSeq] = [since, MAX_SEQ]; // nothing to catch up on
    const queue: Event[] = [];
    let wake: (() => void) | undefined;
    let done = false;
    const subscriber: Subscriber = {
      communityId,
      since,
      types: new Set(types),
      push(event) {
        queue.push(event);
        wake?.();
      },
    };
    this.subscribers.add(subscriber);
    const finish = () => {
      done = true;
      this.subscribers.delete(subscriber);
      wake?.();
    };
    const iterator: AsyncIterableIterator<Event> = {
      [Symbol.asyncIterator]: () => iterator,
      async next() {
        while (!queue.length && !done) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        if (queue.length) return { value: queue.shift()!, done: false };
        return { value: undefined, done: true };
      },
      async return() {
        finish();
        return { value: undefined, done: true };
      },
    };
    return iterator;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopTimers();
    for (const s of [...this.subscribers]) this.subscribers.delete(s);
    const client = this.client;
    this.client = undefined;
    await client?.query('delete from event_listeners where instance_id = $1', [this.instance]).catch(() => undefined);
    await client?.end().catch(() => undefined);
  }
}

/** The runtime's hub (set when the events module starts); subscriptions are refused without one. */
export const EVENT_HUB = slot<EventHub>('eventHub');
