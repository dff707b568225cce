import type { NextFunction, Request, Response } from 'express';
import { presentedKey } from '../auth/gate';
import { BusyError } from '../errors/classify';
import { slot } from '../state';

/**
 * While other callers are about (one of them sent a request in the last second), at most
 * `perCaller` requests of one caller are processed at once by this instance; the caller's
 * further requests wait in line (first come, first served) and are refused with 503 and
 * Retry-After after `waitMs`. A caller alone may have `alone` in progress. The service's
 * process has one thread: a caller with many expensive requests in flight (pages of ten
 * aliases each, bulk writes) fills its event loop with their work, and every other caller's
 * request waits behind all of it. With its own requests lined up here instead, a caller
 * competes with the others through at most `perCaller` requests, and a caller alone keeps
 * the whole process (its requests run back to back either way).
 *
 * A heavy caller, one whose requests have lately taken `heavyMs` or longer in progress (a
 * moving average over its requests, kept while it has any in progress or waiting), has one
 * request in progress at a time while others are about. Its requests are each tens of
 * milliseconds of the thread's work: with several in progress, one of them always has the
 * thread while the others wait on the database, and every other caller's request waits
 * behind it at each step; with one, the thread is free for the others whenever that one waits.
 * Measured with the noisy-neighbour scenario (docs/architecture.md): B's median under A's
 * attack fell from 19.4 ms (A with 4 in progress) to 2.0-2.5 ms, A answering as many.
 * Light callers keep `perCaller`, so their concurrent requests still overlap (two requests
 * with one Idempotency-Key, a client's parallel reads).
 *
 * The caller is the credential as presented (API key, operator token), before the gate checks
 * it: the line is taken before the body is read, and a wrong key is refused in its turn like
 * any request of that key. Like the per-caller connection cap (src/db/caller-budget.ts), the
 * line is per process; the hourly budget, which must agree across instances, is the gate's.
 */
interface Waiter {
  admit: () => void;
  timer: NodeJS.Timeout;
}

class Line {
  running = 0;
  readonly waiting: Waiter[] = [];
  /** Moving average of its requests' time in progress (ms); undefined until one has ended. */
  averageMs: number | undefined;
}

/** The weight of a request's time in the caller's moving average. */
const AVERAGE_WEIGHT = 0.25;

export interface CallerQueueOptions {
  /** Requests of one caller in progress at once while other callers are about. */
  perCaller: number;
  /** How long a request may wait in line before it is refused (503). */
  waitMs: number;
  observer?: QueueObserver;
  /** The same for a caller with nobody else about (default `perCaller`). */
  alone?: number;
  /** A caller whose requests average this long in progress (ms) has one at a time while others are about (default: never). */
  heavyMs?: number;
  now?: () => number;
}

export interface QueueObserver {
  waited(): void;
  refused(): void;
}

/** How long a caller counts as about after its last request. */
export const ABOUT_MS = 1000;

export class CallerQueue {
  private readonly lines = new Map<string, Line>();
  /** The caller of the latest request, and the latest caller other than it, with their times: enough to tell "someone else is about". */
  private latest = { caller: '', at: -Infinity };
  private other = { caller: '', at: -Infinity };

  readonly perCaller: number;
  readonly waitMs: number;
  readonly alone: number;
  readonly heavyMs: number;
  private readonly observer?: QueueObserver;
  private readonly now: () => number;

  constructor(o: CallerQueueOptions) {
    this.perCaller = o.perCaller;
    this.waitMs = o.waitMs;
    this.alone = o.alone ?? o.perCaller;
    this.heavyMs = o.heavyMs ?? Infinity;
    this.observer = o.observer;
    this.now = o.now ?? (() => performance.now());
  }

  /** Another caller sent a request within ABOUT_MS. */
  private othersAbout(caller: string, now: number): boolean {
    const last = this.latest.caller === caller ? this.other : this.latest;
    return now - last.at < ABOUT_MS;
  }

  private seen(caller: string, now: number): void {
    if (this.latest.caller === caller) this.latest.at = now;
    else {
      this.other = this.latest;
      this.latest = { caller, at: now };
    }
  }

  /** How many requests `caller` may have in progress now. */
  capOf(caller: string, now = this.now()): number {
    if (!this.othersAbout(caller, now)) return this.alone;
    return this.heavy(caller) ? 1 : this.perCaller;
  }

  /** Its requests lately averaged `heavyMs` or more in progress. */
  heavy(caller: string): boolean {
    const average = this.lines.get(caller)?.averageMs;
    return average !== undefined && average >= this.heavyMs;
  }

  /** Requests of `caller` being processed now (tests). */
  running(caller: string): number {
    return this.lines.get(caller)?.running ?? 0;
  }

  /** Requests of `caller` waiting (tests). */
  waiting(caller: string): number {
    return this.lines.get(caller)?.waiting.length ?? 0;
  }

  /**
   * Runs `start` when the caller has a free place (at once, or after the ones before it), or
   * `refuse` after `waitMs`; `leave` cancels a wait (the client went away). Each admitted
   * request must `release` exactly once.
   */
  enter(caller: string, start: (release: () => void) => void, refuse: () => void): { leave: () => void } {
    let line = this.lines.get(caller);
    if (!line) this.lines.set(caller, (line = new Line()));
    let admittedAt = 0;
    const release = once(() => this.release(caller, admittedAt));
    const now = this.now();
    this.seen(caller, now);
    if (line.waiting.length === 0 && line.running < this.capOf(caller, now)) {
      line.running++;
      admittedAt = now;
      start(release);
      return { leave: () => undefined };
    }
    this.observer?.waited();
    const current = line;
    const waiter: Waiter = {
      admit: () => {
        admittedAt = this.now();
        start(release);
      },
      timer: setTimeout(() => {
        remove(current.waiting, waiter);
        this.forget(caller, current);
        this.observer?.refused();
        refuse();
      }, this.waitMs),
    };
    current.waiting.push(waiter);
    return {
      leave: () => {
        if (!remove(current.waiting, waiter)) return;
        clearTimeout(waiter.timer);
        this.forget(caller, current);
      },
    };
  }

  private release(caller: string, admittedAt: number): void {
    const line = this.lines.get(caller);
    if (!line) return;
    line.running--;
    const ms = this.now() - admittedAt;
    line.averageMs = line.averageMs === undefined ? ms : line.averageMs + AVERAGE_WEIGHT * (ms - line.averageMs);
    // The freed place goes to the next in line, while the caller is under its cap.
    while (line.waiting.length && line.running < this.capOf(caller)) {
      const next = line.waiting.shift()!;
      clearTimeout(next.timer);
      line.running++;
      next.admit();
    }
    this.forget(caller, line);
  }

  private forget(caller: string, line: Line): void {
    if (line.running === 0 && line.waiting.length === 0 && this.lines.get(caller) === line) this.lines.delete(caller);
  }
}

/** The runtime's line (tests look at it). */
export const CALLER_LINE = slot<CallerQueue>('callerLine');

function once(f: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    f();
  };
}

function remove<T>(list: T[], item: T): boolean {
  const at = list.indexOf(item);
  if (at < 0) return false;
  list.splice(at, 1);
  return true;
}

/** The caller of a request for the line: its API key or bearer credential as presented; requests with neither, by client address. */
export function callerOfRequest(req: Request): string {
  const key = presentedKey(req);
  if (key) return `k:${key}`;
  const auth = req.get('authorization');
  return auth ? `a:${auth}` : `ip:${req.ip ?? ''}`;
}

/** Express middleware: a request enters its caller's line before anything reads its body. */
export function callerLine(queue: CallerQueue) {
  return (req: Request, res: Response, next: NextFunction) => {
    const { leave } = queue.enter(
      callerOfRequest(req),
      (release) => {
        // Released when the answer is complete or the client went away, whichever comes first.
        res.once('close', release);
        if (res.destroyed) return release();
        next();
      },
      () => next(new BusyError('This API key has as many requests in progress as it may have now, and more waiting; try again shortly.')),
    );
    res.once('close', leave);
  };
}
