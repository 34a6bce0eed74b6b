import { DomainError } from './errors';

/** The answer once a deadline has passed: retryable, like a lost database connection. */
export function deadlinePassed(): DomainError {
  return new DomainError('unavailable', 'operation deadline passed', 1);
}

/**
 * An operation's deadline, started by the transport when the request arrives (so reading the
 * body counts). Work that commits checks it right before committing and rolls back once it has
 * passed; the transport waits for that work to settle instead of racing it, so nothing is
 * executed after a timeout was answered.
 */
export class Deadline {
  /** Made on first use of `signal`: most requests never need one, and an AbortSignal per request costs CPU. */
  private controller: AbortController | null = null;
  private readonly passedListeners = new Set<() => void>();
  private fired = false;
  private readonly timer: NodeJS.Timeout;
  private readonly endsAt: number;

  constructor(ms: number) {
    this.endsAt = performance.now() + ms;
    this.timer = setTimeout(() => this.fire(), ms);
    this.timer.unref();
  }

  private fire(): void {
    this.fired = true;
    this.controller?.abort(deadlinePassed());
    for (const listener of [...this.passedListeners]) listener();
    this.passedListeners.clear();
  }

  /** Aborted when the deadline passes. */
  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.fired) this.controller.abort(deadlinePassed());
    }
    return this.controller.signal;
  }

  get passed(): boolean {
    return this.fired || performance.now() >= this.endsAt;
  }

  /**
   * Call `listener` once when the deadline's timer fires (never if it already has, nor after
   * `clear`); returns the function that cancels it.
   */
  onPassed(listener: () => void): () => void {
    this.passedListeners.add(listener);
    return () => {
      this.passedListeners.delete(listener);
    };
  }

  remainingMs(): number {
    return Math.max(0, this.endsAt - performance.now());
  }

  /** `unavailable` once the deadline has passed. */
  check(): void {
    if (this.passed) throw deadlinePassed();
  }

  /**
   * For work that commits nothing (reads, authentication): answer `unavailable` at the deadline
   * and let the work finish unobserved.
   */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.passed) {
      work.catch(() => {});
      return Promise.reject(deadlinePassed());
    }
    return new Promise<T>((resolve, reject) => {
      const cancel = this.onPassed(() => {
        work.catch(() => {});
        reject(deadlinePassed());
      });
      work.then(
        (value) => {
          cancel();
          resolve(value);
        },
        (error: unknown) => {
          cancel();
          reject(error);
        },
      );
    });
  }

  /** Stop the timer (the request is answered); `passed` still tells the time. */
  clear(): void {
    clearTimeout(this.timer);
  }
}
