import { Client } from 'pg';
import type { Logger } from '../../logger';
import { toEvent, type EventRow } from './event.service';
import type { Event } from './event.entity';

export const EVENTS_CHANNEL = 'community_events';

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
  private lastPosition = '0';
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
      client.on('notification', () => void this.read());
      await client.query(`listen ${EVENTS_CHANNEL}`);
      if (this.lastPosition === '0') {
        const { rows } = await client.query<{ p: string | null }>('select max(position)::text as p from events');
        this.lastPosition = rows[0].p ?? '0';
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
        const { rows } = await client.query<EventRow & { community_id: string }>(
          `select id, type, created_at, data, changes, position::text, seq, community_id from events
            where position > $1::bigint order by position, seq limit 1000`,
          [this.lastPosition],
        );
        for (const row of rows) {
          this.lastPosition = row.position;
          const event = toEvent(row);
          for (const s of this.subscribers) if (s.communityId === row.community_id && s.types.has(row.type)) s.push(event);
        }
        if (rows.length === 1000) this.again = true;
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
