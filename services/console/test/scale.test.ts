import { describe, expect, it } from 'vitest';
import { axis, stepStop } from '../src/scale';

/** The timeline's keyboard: every arrow press moves the crosshair to the next cell's stop. */

describe('the keyboard stops of a timeline axis', () => {
  // Record times as the ledger writes them (microseconds); the middle of the second cell,
  // 1795841376.3480005, rounds down to the millisecond the API takes.
  const edges = [1_795_841_376.068, 1_795_841_376.348001, 1_795_841_376.348, 1_795_841_376.9];
  const recorded = axis(edges, 324, 16);

  it('puts one stop in the middle of every cell, rounded to the millisecond, the last past every edge', () => {
    expect(recorded.edges).toEqual([...edges].sort((a, b) => a - b));
    expect(recorded.stops).toHaveLength(4);
    recorded.stops.forEach((stop, i) => {
      expect(Math.round(stop * 1000)).toBe(stop * 1000);
      expect(stop).toBeGreaterThanOrEqual(recorded.edges[i] as number);
      expect(stop).toBeLessThan(recorded.edges[i + 1] ?? recorded.end);
    });
    expect(recorded.stops[3]).toBeGreaterThan(1_795_841_376.9);
  });

  it('steps from each stop to the next and back, even from a stop rounded below its exact middle', () => {
    const exactMiddle = (1_795_841_376.348 + 1_795_841_376.348001) / 2;
    expect(recorded.stops[1]).toBeLessThan(exactMiddle);
    let at: number | undefined;
    const visited: number[] = [];
    for (let i = 0; i < recorded.stops.length; i += 1) {
      at = stepStop(recorded, at, 1);
      visited.push(at);
    }
    expect(visited).toEqual(recorded.stops);
    // Held at the last stop, then down through every one.
    expect(stepStop(recorded, at, 1)).toBe(recorded.stops[3]);
    const down = [2, 1, 0].map(() => {
      at = stepStop(recorded, at, -1);
      return at;
    });
    expect(down).toEqual([recorded.stops[2], recorded.stops[1], recorded.stops[0]]);
    expect(stepStop(recorded, at, -1)).toBe(recorded.stops[0]);
  });

  it('steps from a clicked point to the stop of the next cell, and from before the first edge to the first', () => {
    const inSecondCellLow = 1_795_841_376.1;
    expect(stepStop(recorded, inSecondCellLow, 1)).toBe(recorded.stops[1]);
    expect(stepStop(recorded, inSecondCellLow, 0)).toBe(recorded.stops[0]);
    expect(stepStop(recorded, 1_700_000_000, 1)).toBe(recorded.stops[0]);
    expect(stepStop(recorded, undefined, 0)).toBe(recorded.stops[0]);
  });
});
