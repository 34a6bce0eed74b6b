import type { Database } from './database';
import { ChainStorage } from './storage/chain-storage';
import { ChangeStorage } from './storage/change-storage';
import { CommitStorage } from './storage/commit-storage';
import { CredentialStorage } from './storage/credential-storage';
import { DirectoryStorage } from './storage/directory-storage';
import { EvidenceStorage } from './storage/evidence-storage';
import { ExportStorage } from './storage/export-storage';
import { IdempotencyStorage } from './storage/idempotency-storage';
import { IndexStateStorage } from './storage/index-state-storage';
import { MembershipStorage } from './storage/membership-storage';
import { MemoryStorage } from './storage/memory-storage';
import { NamespaceStorage } from './storage/namespace-storage';
import { ReceiptStorage } from './storage/receipt-storage';
import { WebhookStorage } from './storage/webhook-storage';
import type { WrittenRecords } from './storage/written-records';

/**
 * Every storage class bound to one executor (the database or an open transaction). Point reads
 * (one row by id with the caller's standing) go to `pointReads`: on the database, connections of
 * their own on which the driver pipelines them (see `OpenOptions.pointReadConnections`); in a
 * transaction, the transaction itself. A write transaction's stores note the rows they insert in
 * `written`, from which its commit is hashed (`ChainStorage.seal`).
 */
export class Stores {
  readonly directory: DirectoryStorage;
  readonly memberships: MembershipStorage;
  readonly commits: CommitStorage;
  readonly idempotency: IdempotencyStorage;
  readonly namespaces: NamespaceStorage;
  readonly evidence: EvidenceStorage;
  readonly memories: MemoryStorage;
  readonly receipts: ReceiptStorage;
  readonly indexState: IndexStateStorage;
  readonly credentials: CredentialStorage;
  readonly exports: ExportStorage;

  readonly webhooks: WebhookStorage;
  readonly changes: ChangeStorage;
  readonly chain: ChainStorage;

  constructor(
    readonly db: Database,
    pointReads: Database = db,
    readonly written: WrittenRecords | null = null,
  ) {
    this.directory = new DirectoryStorage(db, written);
    this.memberships = new MembershipStorage(db);
    this.commits = new CommitStorage(db);
    this.idempotency = new IdempotencyStorage(db);
    this.namespaces = new NamespaceStorage(db, pointReads, written);
    this.evidence = new EvidenceStorage(db, pointReads, written);
    this.memories = new MemoryStorage(db, pointReads, written);
    this.receipts = new ReceiptStorage(db, written);
    this.indexState = new IndexStateStorage(db);
    this.credentials = new CredentialStorage(db, written);
    this.exports = new ExportStorage(db);

    this.webhooks = new WebhookStorage(db, written);
    this.changes = new ChangeStorage(db);
    this.chain = new ChainStorage(db, written);
  }
}
