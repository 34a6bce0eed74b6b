import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Deadline } from '../src/deadline';
import { DomainError } from '../src/errors';

const never = new Promise<never>(() => {});

describe('Deadline', () => {
  it('answers a raced read unavailable (retryable) once it passes, and lets a faster one through', async () => {
    const deadline = new Deadline(30);
    await expect(deadline.race(Promise.resolve('fast'))).resolves.toBe('fast');
    const error = await deadline.race(never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('unavailable');
    expect((error as DomainError).retryAfterSeconds).toBe(1);
    expect(deadline.passed).toBe(true);
    // Raced after it passed: refused at once.
    await expect(deadline.race(Promise.resolve('late'))).rejects.toMatchObject({ code: 'unavailable' });
  });

  it('calls each listener once when it passes, never a cancelled one, never after clear', async () => {
    const deadline = new Deadline(20);
    const calls: string[] = [];
    deadline.onPassed(() => calls.push('kept'));
    const cancel = deadline.onPassed(() => calls.push('cancelled'));
    cancel();
    await sleep(60);
    expect(calls).toEqual(['kept']);
    deadline.onPassed(() => calls.push('after'));
    await sleep(20);
    expect(calls).toEqual(['kept']);

    const cleared = new Deadline(20);
    cleared.onPassed(() => calls.push('cleared'));
    cleared.clear();
    await sleep(60);
    expect(calls).toEqual(['kept']);
    // `passed` still tells the time after clear.
    expect(cleared.passed).toBe(true);
  });

  it('aborts its signal with the unavailable error, whether asked for before or after it passed', async () => {
    const early = new Deadline(20);
    const signal = early.signal;
    expect(signal.aborted).toBe(false);
    await sleep(60);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DomainError).code).toBe('unavailable');

    const late = new Deadline(20);
    await sleep(60);
    expect(late.signal.aborted).toBe(true);
    expect((late.signal.reason as DomainError).code).toBe('unavailable');
    expect(new Deadline(10_000).signal.aborted).toBe(false);
  });
});
