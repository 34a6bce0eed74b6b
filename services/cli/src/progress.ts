/** A one-line progress bar, redrawn in place on a terminal and printed every 10% otherwise. */
export function progressBar(done: number, total: number, width = 30, unit = 'commits'): string {
  const ratio = total === 0 ? 1 : Math.min(1, done / total);
  const filled = Math.round(ratio * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}% ${done}/${total} ${unit}`;
}

/** Draws `progressBar` on `progress`: in place on a terminal, every 10% otherwise. */
export function progressDrawer(progress: NodeJS.WriteStream, total: number, unit = 'commits') {
  let done = 0;
  let lastDecile = -1;
  const draw = () => {
    if (progress.isTTY) progress.write(`\r${progressBar(done, total, 30, unit)}`);
    else {
      const decile = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (decile !== lastDecile) progress.write(`${progressBar(done, total, 30, unit)}\n`);
      lastDecile = decile;
    }
  };
  return {
    advance(count: number) {
      done += count;
      draw();
    },
    /** Jump to `count` done (a caller that reports totals rather than steps). */
    reach(count: number) {
      done = count;
      draw();
    },
    get done() {
      return done;
    },
    start: draw,
    end: () => {
      if (progress.isTTY) progress.write('\n');
    },
  };
}
