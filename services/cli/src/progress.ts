/** A one-line progress bar, redrawn in place on a terminal and printed every 10% otherwise. */
export function progressBar(done: number, total: number, width = 30): string {
  const ratio = total === 0 ? 1 : Math.min(1, done / total);
  const filled = Math.round(ratio * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(ratio * 100)).padStart(3)}% ${done}/${total} commits`;
}
