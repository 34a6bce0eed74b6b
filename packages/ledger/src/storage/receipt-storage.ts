import type { Database } from '../database';
import type { DeletionReceiptRow } from '../rows';
import { deletionReceipts } from '../schema';
import type { WrittenRecords } from './written-records';

export class ReceiptStorage {
  constructor(
    private readonly db: Database,
    /** The rows this transaction writes, for its commit's chain hash (`Stores`); none outside a write transaction. */
    private readonly written: WrittenRecords | null = null,
  ) {}

  async insert(row: DeletionReceiptRow): Promise<void> {
    await this.db.insert(deletionReceipts).values(row);
    this.written?.note(deletionReceipts, row);
  }
}
