import { Client } from 'pg';
import type { Logger } from '../../logger';
import { toEvent, type EventRow } from './event.service';
import type { Event } from './event.entity';

export const EVENTS_CHANNEL = 'community_events';
const MAX_SEQ = '9223372036854775807';

interface Subscriber {
  communityId: string;
  types: Set<string>;
  push(event: Event): void;
}

/**
 * Fans committed events out to this instance's GraphQL subscribers. Every instance LISTENs on
 * one PostgreSQL channel; the commit trigger NOTIFYs it with the transaction's position, so an
 * event committed by any instance reaches the subscribers of every instance. On each
 * notification the hub reads every event after the last position it saw (in commit order),
 * so coalesced or missed notifications lose nothing while the connection stands.
 */
export class EventHub {
  private client?: Client;
  private connecting?: Promise<void>;
  /** Every position up to this one was read (or had no subscriber). */
  private lastPosition = 0n;
  /** The highest position notified: a transaction notifies at commit, and positions become visible in order. */
  private notified = 0n;
  /** Within lastPosition + 1, the events up to this seq were read (a transaction of more than one page). */
  private lastSeq = MAX_SEQ;
  private readonly subscribers = new Set<Subscriber>();
  private reading = false;
  private again = false;
  private closed = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly logger: Logger,
  ) {}

  private connect(): Promise<void> {
    this.connecting ??= (async () => {
      const client = new Client({ connectionString: this.databaseUrl });
      client.on('error', (err) => {
        this.logger.warn({ err: err.message }, 'event hub connection lost');
        this.client = undefined;
        this.connecting = undefined;
        if (this.subscribers.size && !this.closed) setTimeout(() => void this.connect().catch(() => undefined), 1000).unref();
      });
      await client.connect();
      client.on('notification', (msg) => {
        if (msg.payload && /^\d+$/.test(msg.payload) && BigInt(msg.payload) > this.notified) this.notified = BigInt(msg.payload);
        void this.read();
      });
      await client.query(`listen ${EVENTS_CHANNEL}`);
      if (this.lastPosition === 0n) {
        const { rows } = await client.query<{ p: string }>('select (case when is_called then last_value else 0 end)::text as p from event_positions');
        this.lastPosition = this.notified = BigInt(rows[0].p);
      }
      this.client = client;
      void this.read(); // what committed while (re)connecting
    })().catch((err) => {
      this.connecting = undefined;
      throw err;
    });
    return this.connecting;
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
        if (!client) return;
        const upTo = this.notified;
        if (upTo <= this.lastPosition) continue;
        const communities = [...new Set([...this.subscribers].map((s) => s.communityId))];
        // Per community, so the feed's (community_id, position, seq) index serves it.
        const { rows } = await client.query<EventRow & { community_id: string }>(
          `select id, type, created_at, data, changes, position::text, seq, community_id from events
            where community_id = any($1::uuid[]) and (position, seq) > ($2::bigint, $3::bigint) and position <= $4::bigint
            order by position, seq limit 1000`,
          [communities, this.lastSeq === MAX_SEQ ? this.lastPosition.toString() : (this.lastPosition + 1n).toString(), this.lastSeq, upTo.toString()],
        );
        for (const row of rows) {
          const event = toEvent(row);
          for (const s of this.subscribers) if (s.communityId === row.community_id && s.types.has(row.type)) s.push(event);
        }
        if (rows.length === 1000) {
          const last = rows[rows.length - 1];
          this.lastPosition = BigInt(last.position) - 1n; // continue inside that position, after its last seq read
          this.lastSeq = String(last.seq);
          this.again = true;
        } else {
          this.lastPosition = upTo;
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
    const queue: Event[] = [];
    let wake: (() => void) | undefined;
    let done = false;
    const subscriber: Subscriber = {
      communityId,
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
    for (const s of [...this.subscribers]) this.subscribers.delete(s);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}

/** This process's hub (set by startRuntime); subscriptions are refused without one. */
export const hubRef: { current?: EventHub } = {};
