/**
 * Where `scale.ts` keeps a loaded database and its ids, shared with `explain-lexical.ts`.
 * One line in LARGE_SHARE goes to the large namespace (default 10: 100,000 at a million);
 * `SCALE_LARGE_SHARE=2` at 200000 gives a proxy for the million's large namespace (100,000
 * memories) that loads in minutes. A share other than the default names its database and state
 * file apart (`tms_bench_scale_200000_share2`).
 */
import os from 'node:os';
import path from 'node:path';

export const LARGE_SHARE = Number(process.env.SCALE_LARGE_SHARE ?? 10);
if (!Number.isInteger(LARGE_SHARE) || LARGE_SHARE < 2) throw new Error('SCALE_LARGE_SHARE: an integer of 2 or more');
const suffix = LARGE_SHARE === 10 ? '' : `_share${LARGE_SHARE}`;

export const scaleDatabase = (size: number) => `tms_bench_scale_${size}${suffix}`;
export const scaleStateFile = (size: number) => path.join(os.tmpdir(), `tms-bench-scale-${size}${suffix}.json`);
