import type { PgTable } from 'drizzle-orm/pg-core';
import { emptySources, type RecordSources } from '../chain';
import {
  credentials,
  deletionReceipts,
  evidence,
  installations,
  memories,
  namespaces,
  revisions,
  verifications,
  webhooks,
  workspaces,
} from '../schema';

/** Where each table's rows go among a commit's record sources (tables the chain never names have none). */
const SOURCES_OF_TABLE = new Map<PgTable, (sources: RecordSources) => Map<string, object>>([
  [workspaces, (s) => s.workspaces],
  [namespaces, (s) => s.namespaces],
  [evidence, (s) => s.evidence],
  [verifications, (s) => s.verifications],
  [memories, (s) => s.memories],
  [revisions, (s) => s.revisions],
  [deletionReceipts, (s) => s.receipts],
  [installations, (s) => s.installations],
  [credentials, (s) => s.credentials],
  [webhooks, (s) => s.webhooks],
]);

/**
 * The rows one write transaction (or one group commit) inserted, kept as the very objects the
 * insert sent: a commit's digest is computed from these, so that what the chain hashes is what
 * was written, on every path (a write in its own transaction, or one grouped with others). The
 * rows a commit names without inserting them (an earlier write's) are read from the ledger.
 * Kept for one transaction only, and never changed after the insert.
 */
export class WrittenRecords {
  readonly sources: RecordSources = emptySources();

  /** Note a row inserted into `table` (ignored for tables whose rows no commit names). */
  note(table: PgTable, row: object): void {
    SOURCES_OF_TABLE.get(table)?.(this.sources).set((row as { id: string }).id, row);
  }
}
