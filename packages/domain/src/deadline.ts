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
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly endsAt: number;

  constructor(ms: number) {
    this.endsAt = performance.now() + ms;
    this.timer = setTimeout(() => this.controller.abort(deadlinePassed()), ms);
    this.timer.unref();
  }

  /** Aborted when the deadline passes. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get passed(): boolean {
    return this.controller.signal.aborted || performance.now() >= this.endsAt;
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
      const onAbort = () => {
        work.catch(() => {});
        reject(deadlinePassed());
      };
      this.signal.addEventListener('abort', onAbort, { once: true });
      work.then(
        (value) => {
          this.signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          this.signal.removeEventListener('abort', onAbort);
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
