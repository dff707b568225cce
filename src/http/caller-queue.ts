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
 * A heavy caller, one whose requests have lately taken `heavyMs` or longer in progress, has one
 * request in progress at a time while others are about. "Lately taken" is weighted by time in
 * progress, not by request: the average of its requests' times, each weighing its own time,
 * and fading with a half-life of a second (`Σ ms² / Σ ms`, both sums decayed). So it is the time
 * of the request a random moment of the caller's time in progress falls in: cheap requests
 * mixed in among expensive ones barely move it (one of 50 ms and nine of 1 ms: 42.5 ms, where
 * an average per request gives 5.9), and it falls only as the expensive ones age. A heavy
 * caller's figures outlive its line for `HEAVY_RETAIN_MS`, so stopping between bursts does not
 * clear them; a light caller leaves nothing behind once idle. Its requests are each tens of
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
}

/** A caller's ended requests: Σ ms and Σ ms² of their times in progress, each decayed since `at`. */
interface Load {
  ms: number;
  squares: number;
  at: number;
}

/** The half-life of a request's weight in its caller's load. */
const LOAD_HALF_LIFE_MS = 1000;
/** How long a heavy caller's load is kept after its last request ended (then it starts afresh). */
export const HEAVY_RETAIN_MS = 10_000;
/** Callers whose load is kept at most (the oldest go first): a bound on what idle heavy callers hold. */
const MAX_LOADS = 10_000;

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
  /** Ended requests' load per caller: while it has a line, and while it is heavy for HEAVY_RETAIN_MS after. */
  private readonly loads = new Map<string, Load>();
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
    return this.heavy(caller, now) ? 1 : this.perCaller;
  }

  /** Its requests lately took `heavyMs` or more in progress, weighted by that time (see above). */
  heavy(caller: string, now = this.now()): boolean {
    const load = this.loads.get(caller);
    if (!load) return false;
    // None of its requests ended for HEAVY_RETAIN_MS: it starts afresh.
    if (now - load.at > HEAVY_RETAIN_MS) {
      this.loads.delete(caller);
      return false;
    }
    return load.squares / load.ms >= this.heavyMs;
  }

  /** Callers whose load is kept (tests). */
  loaded(): number {
    return this.loads.size;
  }

  /** A request of `caller` ended after `ms` in progress. */
  private ended(caller: string, ms: number, now: number): void {
    const load = this.loads.get(caller);
    const decay = load ? 0.5 ** ((now - load.at) / LOAD_HALF_LIFE_MS) : 0;
    // At least 1 us: a request of 0 ms still weighs something (Σ ms never 0).
    const t = Math.max(ms, 0.001);
    const next = { ms: (load?.ms ?? 0) * decay + t, squares: (load?.squares ?? 0) * decay + t * t, at: now };
    // Re-inserted: the map's order is then the order of last use, oldest first.
    this.loads.delete(caller);
    this.loads.set(caller, next);
    for (const oldest of this.loads.keys()) {
      if (this.loads.size <= MAX_LOADS) break;
      this.loads.delete(oldest);
    }
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
    const now = this.now();
    this.ended(caller, now - admittedAt, now);
    // The freed place goes to the next in line, while the caller is under its cap.
    while (line.waiting.length && line.running < this.capOf(caller, now)) {
      const next = line.waiting.shift()!;
      clearTimeout(next.timer);
      line.running++;
      next.admit();
    }
    this.forget(caller, line);
  }

  private forget(caller: string, line: Line): void {
    if (line.running === 0 && line.waiting.length === 0 && this.lines.get(caller) === line) {
      this.lines.delete(caller);
      // A light caller leaves nothing behind; a heavy one's load stays (HEAVY_RETAIN_MS).
      if (!this.heavy(caller)) this.loads.delete(caller);
    }
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
