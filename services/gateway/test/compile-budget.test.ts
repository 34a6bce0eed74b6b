import { describe, expect, it } from 'vitest';
import { CompileBudget } from '../src/graphql/compiled-queries';

describe('CompileBudget (how much time compiling GraphQL queries may take)', () => {
  it('allows compiling until its burst is spent, then refills at its rate, never past the burst', () => {
    let now = 0;
    const budget = new CompileBudget({ msPerSecond: 50, burstMs: 100 }, () => now);
    expect(budget.allows()).toBe(true);
    budget.spend(60);
    expect(budget.allows()).toBe(true);
    budget.spend(60);
    // 100 - 120 = -20 ms: spent.
    expect(budget.allows()).toBe(false);
    // 200 ms later: -20 + 10 = -10 ms, still spent.
    now += 200;
    expect(budget.allows()).toBe(false);
    // 300 ms more: -10 + 15 = 5 ms.
    now += 300;
    expect(budget.allows()).toBe(true);
    budget.spend(5);
    expect(budget.allows()).toBe(false);
    // An hour idle refills to the burst, no more: 100 ms spent leaves none.
    now += 3_600_000;
    expect(budget.allows()).toBe(true);
    budget.spend(100);
    expect(budget.allows()).toBe(false);
  });
});
