import type { Database } from '../database';
import { deletionReceipts } from '../schema';

export type DeletionReceiptRow = typeof deletionReceipts.$inferSelect;

export class ReceiptStorage {
  constructor(private readonly db: Database) {}

  async insert(row: DeletionReceiptRow): Promise<void> {
    await this.db.insert(deletionReceipts).values(row);
  }
}
