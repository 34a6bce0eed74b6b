/**
 * Open subscription streams of this process, at most `max` at a time. A stream holds one
 * waiter on the commit notifications and runs one feed read per batch; past the bound a new
 * subscription is refused with `unavailable` (retry after a second) rather than queued.
 */
export class StreamSlots {
  private open = 0;

  constructor(readonly max: number) {}

  /** A release function, or null when every slot is taken. */
  acquire(): (() => void) | null {
    if (this.open >= this.max) return null;
    this.open += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open -= 1;
    };
  }

  get count(): number {
    return this.open;
  }
}
