import fs from 'node:fs';
import path from 'node:path';
import {
  type ChainVerdict,
  EmbeddedLedgerLockedError,
  Ledger,
  MoveTarget,
  TargetHoldsLedgerError,
  verifyWorkspaceChain,
} from '@tms/ledger';
import type { CliEnv } from './env';
import { indexRebuild } from './index-command';
import { progressDrawer } from './progress';

export interface MoveArgs {
  /** The target's URL (postgres://...). */
  to: string;
  /** The DATA_DIR whose `pglite` folder holds the embedded ledger. */
  dataDir: string;
  /** Rebuild the search index on the target after the copy (`--no-index`: leave it to the indexer). */
  index: boolean;
}

/** The target's address for messages, without its password. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

const verdictText = (verdict: ChainVerdict) =>
  verdict.intact
    ? `head ${verdict.sequence}, chain_hash ${verdict.chainHash}`
    : `breaks at sequence ${verdict.sequence} (${verdict.reason})`;

/** The embedded ledger's folder under `dataDir`, which must hold one. */
function embeddedFolder(dataDir: string): string {
  const folder = path.join(dataDir, 'pglite');
  if (!fs.existsSync(path.join(folder, 'PG_VERSION'))) {
    throw new Error(`no embedded ledger at ${folder} (give --data-dir, or set DATA_DIR, to the gateway's DATA_DIR)`);
  }
  return folder;
}

/** Open the embedded ledger for the move: refused while another process (a gateway) holds it. */
async function openSource(folder: string): Promise<Ledger> {
  try {
    return await Ledger.open({ dataDir: folder, holder: 'svc ledger move' });
  } catch (error) {
    if (error instanceof EmbeddedLedgerLockedError && error.holder) {
      const { pid, role, startedAt } = error.holder;
      throw new Error(
        `the embedded ledger at ${folder} is in use by pid ${pid} (${role}, started ${startedAt}): stop it, then move`,
      );
    }
    throw error;
  }
}

/**
 * `svc ledger move --to URL`: the embedded ledger under DATA_DIR into an empty Postgres database,
 * migrated here in DATABASE_LAYOUT (and CITUS). Everything that could refuse (no embedded ledger,
 * an unreachable target, a target holding a ledger, a ledger held by a running gateway) refuses
 * before anything is changed. Then one transaction copies every row, each workspace's chain is
 * recomputed on both sides and must agree, and the search index is rebuilt on the target, each
 * step with progress on stderr. The embedded ledger is read, never changed (but migrated to this
 * build, as a gateway start would).
 */
export async function moveLedger(
  env: CliEnv,
  args: MoveArgs,
  progress: NodeJS.WriteStream = process.stderr,
): Promise<string> {
  const folder = embeddedFolder(args.dataDir);
  const target = await MoveTarget.connect(args.to);
  let source: Ledger | null = null;
  let targetLedger: Ledger | null = null;
  try {
    const occupied = await target.occupied();
    if (occupied.length > 0) throw new TargetHoldsLedgerError(occupied);
    source = await openSource(folder);
    await source.migrate();
    targetLedger = await Ledger.open({ databaseUrl: args.to });
    await targetLedger.migrate({ layout: env.DATABASE_LAYOUT, citus: env.CITUS === '1' });

    progress.write(`copying the embedded ledger at ${folder} to ${displayUrl(args.to)}\n`);
    // The total is known once the copy has counted the source's rows.
    const drawing: { bar?: ReturnType<typeof progressDrawer> } = {};
    const { tables, workspaces } = await target.copyFrom(source, (copied, total) => {
      drawing.bar ??= progressDrawer(progress, total, 'rows');
      drawing.bar.reach(copied);
    });
    drawing.bar?.end();
    await target.analyze();

    progress.write(`recomputing the chain of ${plural(workspaces.length, 'workspace')} on both sides\n`);
    const heads: string[] = [];
    for (const workspaceId of workspaces) {
      const before = await source.snapshot((stores) => verifyWorkspaceChain(stores, workspaceId));
      const after = await targetLedger.snapshot((stores) => verifyWorkspaceChain(stores, workspaceId));
      if (JSON.stringify(before) !== JSON.stringify(after)) {
        throw new Error(
          `workspace ${workspaceId}: the embedded ledger has ${verdictText(before)} but the target ${verdictText(after)}; drop the target database before moving again`,
        );
      }
      heads.push(`  ${workspaceId}  ${verdictText(after)}`);
    }
    // The embedded ledger is free again as soon as it has been read.
    await source.close();
    source = null;

    const rows = tables.reduce((n, t) => n + t.rows, 0);
    const lines = [
      `moved ${plural(workspaces.length, 'workspace')} (${rows} rows in ${tables.length} tables) to ${displayUrl(args.to)}; each chain recomputed, the same on both sides:`,
      ...heads,
    ];
    if (!args.index) {
      lines.push('search index not rebuilt (--no-index): the indexer of the first gateway on the target builds it');
    } else if (env.SEARCH_PROVIDER === 'none') {
      lines.push('search index not rebuilt: SEARCH_PROVIDER=none');
    } else {
      progress.write('rebuilding the search index on the target\n');
      try {
        lines.push(await indexRebuild({ ...env, DATABASE_URL: args.to }, targetLedger, undefined, progress));
      } catch (error) {
        // The ledger has moved whole: say so, and how to finish.
        throw new Error(
          `the ledger moved, but rebuilding the search index failed (${(error as Error).message}): run svc index rebuild with DATABASE_URL=${displayUrl(args.to)}`,
        );
      }
    }
    lines.push(
      `next: start the gateway with DATABASE_URL=${displayUrl(args.to)}; keep ${folder} until you have checked it`,
    );
    return lines.join('\n');
  } finally {
    await source?.close();
    await targetLedger?.close();
    await target.close();
  }
}
