import type { NextFunction, Request, Response } from 'express';
import { presentedKey } from '../auth/gate';
import { BusyError } from '../errors/classify';
import { slot } from '../state';

/**
 * At most `perCaller` requests of one caller are processed at once by this instance; the
 * caller's further requests wait in line (first come, first served) and are refused with 503
 * and Retry-After after `waitMs`. The service's process has one thread: a caller with many
 * expensive requests in flight (pages of ten aliases each, bulk writes) fills its event loop
 * with their work, and every other caller's request waits behind all of it. With its own
 * requests lined up here instead, a caller competes with the others through at most
 * `perCaller` requests, and a caller alone loses nothing (its requests run back to back).
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

export interface QueueObserver {
  waited(): void;
  refused(): void;
}

export class CallerQueue {
  private readonly lines = new Map<string, Line>();

  constructor(
    readonly perCaller: number,
    readonly waitMs: number,
    private readonly observer?: QueueObserver,
  ) {}

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
    const release = once(() => this.release(caller));
    if (line.running < this.perCaller) {
      line.running++;
      start(release);
      return { leave: () => undefined };
    }
    this.observer?.waited();
    const current = line;
    const waiter: Waiter = {
      admit: () => start(release),
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

  private release(caller: string): void {
    const line = this.lines.get(caller);
    if (!line) return;
    const next = line.waiting.shift();
    if (next) {
      // The place passes straight to the next in line.
      clearTimeout(next.timer);
      next.admit();
      return;
    }
    line.running--;
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
      () => next(new BusyError(`This API key has ${queue.perCaller} requests in progress and more waiting; try again shortly.`)),
    );
    res.once('close', leave);
  };
}
