/**
 * One axis of the timeline: a linear scale over the answer's own times (Unix seconds), with room
 * past the last edge for open intervals, and the keyboard's stops on it.
 */
export interface Axis {
  min: number;
  end: number;
  /** Every distinct time, ascending: where one cell of the axis ends and the next begins. */
  edges: number[];
  /** The keyboard stops: the middle of every cell, rounded to the millisecond the API takes. */
  stops: number[];
  at(value: number): number;
  invert(pixel: number): number;
}

/** Times go to the API in whole milliseconds. */
export const toMilliseconds = (seconds: number) => Math.round(seconds * 1000) / 1000;

/** The axis over `values`, drawn from pixel `from` to pixel `to`. */
export function axis(values: number[], from: number, to: number): Axis {
  const min = Math.min(...values);
  const max = Math.max(...values);
  const span = max - min;
  const end = max + (span > 0 ? span * 0.15 : 60);
  const edges = [...new Set(values)].sort((a, b) => a - b);
  return {
    min,
    end,
    edges,
    stops: edges.map((edge, i) => toMilliseconds((edge + (edges[i + 1] ?? end)) / 2)),
    at: (value) => from + ((value - min) / (end - min)) * (to - from),
    invert: (pixel) => min + ((pixel - from) / (to - from)) * (end - min),
  };
}

/**
 * The stop `delta` cells on from the cell that holds `value` (before the first edge: from no cell),
 * held to the axis. The cell is found by the edges, not the stops: a stop rounded down to the
 * millisecond lies below its own exact middle, and must still count as its own cell.
 */
export function stepStop(axis: Axis, value: number | undefined, delta: number): number {
  const cell = value === undefined ? -1 : axis.edges.reduce((found, edge, i) => (edge <= value ? i : found), -1);
  const next = Math.max(0, Math.min(axis.stops.length - 1, cell + delta));
  return axis.stops[next] ?? axis.min;
}
