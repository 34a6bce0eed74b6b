import { namespacesCreate } from '@tms/catalog';
import type { ExportPage, ExportScope, Stores } from '@tms/ledger';
import {
  presentDeletionReceipt,
  presentEvidence,
  presentNamespace,
  presentRevision,
  presentVerification,
  presentWorkspace,
} from './present';
import { presentMemory } from './services/memories';

/** What one export line holds besides its resource: the commit that wrote it. */
interface Stamped {
  sequence: number;
  recorded_at: number;
}

export type ExportLineType =
  | 'commit'
  | 'workspace'
  | 'namespace'
  | 'evidence'
  | 'verification'
  | 'memory'
  | 'revision'
  | 'receipt';

/** One NDJSON line: a resource as the /v1 API shows it, its type, and the commit that wrote it. */
export type ExportLine = { type: ExportLineType } & Stamped & Record<string, unknown>;

/** Within one commit, what a restore needs first comes first (a memory before its revision). */
const ORDER: Record<ExportLineType, number> = {
  commit: -1,
  workspace: 0,
  namespace: 1,
  evidence: 2,
  verification: 3,
  memory: 4,
  revision: 5,
  receipt: 6,
};

export interface ExportPlan {
  scope: ExportScope;
  /** Read the lines of the commits after `afterSequence`, at most `batchSize` commits' worth. */
  page(afterSequence: number, batchSize: number): Promise<{ lines: ExportLine[]; lastSequence: number | null }>;
}

/** Why an export cannot start (an unknown workspace or namespace): the CLI prints it as is. */
export class ExportRefused extends Error {}

/**
 * Plan an export of a workspace's ledger (decisions §10): every unpurged namespace, evidence,
 * verification, memory and revision, and every deletion receipt, each at the commit that wrote
 * it, as the API shows it known at the head. Run it on a snapshot (`Ledger.snapshot`).
 */
export async function planExport(
  stores: Stores,
  workspaceId: string,
  subtreeRootId: string | null,
): Promise<ExportPlan> {
  const workspace = await stores.directory.getWorkspace(workspaceId);
  const head = await stores.commits.head(workspaceId);
  if (!workspace || !head) throw new ExportRefused(`no workspace ${workspaceId}`);
  if (subtreeRootId !== null && !(await stores.exports.namespace(workspaceId, subtreeRootId))) {
    throw new ExportRefused(`no namespace ${subtreeRootId} in workspace ${workspaceId}`);
  }
  const scope: ExportScope = { workspaceId, subtreeRootId, headSequence: head.sequence, knownAt: head.recordedAt };
  return {
    scope,
    async page(afterSequence, batchSize) {
      const page = await stores.exports.page(scope, afterSequence, batchSize);
      const lines = linesOf(page, scope, presentWorkspace(workspace));
      // A whole workspace's export carries its chain (docs/ledger-proofs.md): each commit's chain
      // hash and digest input (hashes only), so `svc ledger verify --file` checks it offline.
      if (subtreeRootId === null) {
        const inputs = await stores.chain.digestInputs(workspaceId, page.commits);
        page.commits.forEach((commit, i) => {
          lines.push({
            type: 'commit',
            sequence: commit.sequence,
            recorded_at: commit.recordedAt,
            chain_hash: commit.chainHash,
            digest_input: inputs[i],
          });
        });
        lines.sort((a, b) => a.sequence - b.sequence || ORDER[a.type] - ORDER[b.type]);
      }
      return { lines, lastSequence: page.commits.at(-1)?.sequence ?? null };
    },
  };
}

function linesOf(page: ExportPage, scope: ExportScope, workspace: Record<string, unknown>): ExportLine[] {
  const commitOf = new Map(page.commits.map((c) => [c.sequence, c]));
  const lines: ExportLine[] = [];
  const stamp = (sequence: number): Stamped => ({
    sequence,
    recorded_at: commitOf.get(sequence)?.recordedAt as number,
  });
  const add = (type: ExportLineType, resource: object, sequence: number) =>
    lines.push({ type, ...resource, ...stamp(sequence) });

  // Creating the workspace is its commit 1 (docs/semantics.md, Ledger).
  if (commitOf.has(1)) add('workspace', workspace, 1);
  // A namespace is listed at the commit that created it, as it is named now.
  const namespaceById = new Map(page.namespaces.map((n) => [n.id, n]));
  for (const commit of page.commits) {
    if (commit.operation !== namespacesCreate.name) continue;
    for (const id of commit.subjectIds) {
      const row = namespaceById.get(id);
      if (row) add('namespace', presentNamespace(row), commit.sequence);
    }
  }
  for (const row of page.evidence) add('evidence', presentEvidence(row), row.commitSequence);
  // A verification's only commit is the one that recorded it.
  const sequenceOf = new Map(page.commits.flatMap((c) => c.subjectIds.map((id) => [id, c.sequence] as const)));
  for (const row of page.verifications) add('verification', presentVerification(row), sequenceOf.get(row.id) as number);
  for (const { revision, memory } of page.revisions) {
    if (memory) add('memory', presentMemory(memory, memory.knownGeneration), revision.commitSequence);
    add('revision', presentRevision(revision, scope.knownAt), revision.commitSequence);
  }
  for (const row of page.receipts) add('receipt', presentDeletionReceipt(row), row.commitSequence);
  return lines.sort((a, b) => a.sequence - b.sequence || ORDER[a.type] - ORDER[b.type]);
}
