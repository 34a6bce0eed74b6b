import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import type { Database } from '../database';
import { afterPosition, type CredentialRow, type InstallationRow } from '../rows';
import { credentialDirectory, credentials, installations } from '../schema';
import type { WrittenRecords } from './written-records';

/** A listing position: (created_at, id). */
export interface ListPosition {
  createdAt: number;
  id: string;
}

/** Product installations and the opaque credentials issued for them and as service keys. */
export class CredentialStorage {
  constructor(
    private readonly db: Database,
    /** The rows this transaction writes, for its commit's chain hash (`Stores`); none outside a write transaction. */
    private readonly written: WrittenRecords | null = null,
  ) {}

  async insertInstallation(row: InstallationRow): Promise<void> {
    await this.db.insert(installations).values(row);
    this.written?.note(installations, row);
  }

  async getInstallation(workspaceId: string, id: string): Promise<InstallationRow | null> {
    const rows = await this.db
      .select()
      .from(installations)
      .where(and(eq(installations.workspaceId, workspaceId), eq(installations.id, id)));
    return rows[0] ?? null;
  }

  async listInstallations(workspaceId: string, after: ListPosition | null, limit: number): Promise<InstallationRow[]> {
    return this.db
      .select()
      .from(installations)
      .where(
        and(
          eq(installations.workspaceId, workspaceId),
          afterPosition(installations.createdAt, installations.id, after),
        ),
      )
      .orderBy(asc(installations.createdAt), asc(installations.id))
      .limit(limit);
  }

  /** Revoke an installation and every credential issued for it; false when it already was. */
  async revokeInstallation(workspaceId: string, id: string, at: number): Promise<boolean> {
    const revoked = await this.db
      .update(installations)
      .set({ revokedAt: at })
      .where(and(eq(installations.workspaceId, workspaceId), eq(installations.id, id), isNull(installations.revokedAt)))
      .returning({ id: installations.id });
    if (revoked.length === 0) return false;
    await this.db
      .update(credentials)
      .set({ revokedAt: at })
      .where(
        and(
          eq(credentials.workspaceId, workspaceId),
          eq(credentials.installationId, id),
          isNull(credentials.revokedAt),
        ),
      );
    return true;
  }

  /** The credential and its directory entry (one workspace's row plus a reference row). */
  async insertCredential(row: CredentialRow): Promise<void> {
    await this.db.insert(credentials).values(row);
    this.written?.note(credentials, row);
    await this.db.insert(credentialDirectory).values({ id: row.id, workspaceId: row.workspaceId });
  }

  async getCredential(workspaceId: string, id: string): Promise<CredentialRow | null> {
    const rows = await this.db
      .select()
      .from(credentials)
      .where(and(eq(credentials.workspaceId, workspaceId), eq(credentials.id, id)));
    return rows[0] ?? null;
  }

  /**
   * The workspace holding the credential a presented secret names, from the directory (a
   * reference table on a cluster), so that the credential itself is then read from one shard.
   * Ids are unique by construction (120 random bits).
   */
  async workspaceOfCredential(id: string): Promise<string | null> {
    const rows = await this.db
      .select({ workspaceId: credentialDirectory.workspaceId })
      .from(credentialDirectory)
      .where(eq(credentialDirectory.id, id));
    return rows[0]?.workspaceId ?? null;
  }

  async listCredentials(
    workspaceId: string,
    filter: { installationId?: string | undefined },
    after: ListPosition | null,
    limit: number,
  ): Promise<CredentialRow[]> {
    return this.db
      .select()
      .from(credentials)
      .where(
        and(
          eq(credentials.workspaceId, workspaceId),
          filter.installationId === undefined ? undefined : eq(credentials.installationId, filter.installationId),
          afterPosition(credentials.createdAt, credentials.id, after),
        ),
      )
      .orderBy(asc(credentials.createdAt), asc(credentials.id))
      .limit(limit);
  }

  /** Revoke one credential; false when it already was. */
  async revokeCredential(workspaceId: string, id: string, at: number): Promise<boolean> {
    const rows = await this.db
      .update(credentials)
      .set({ revokedAt: at })
      .where(and(eq(credentials.workspaceId, workspaceId), eq(credentials.id, id), isNull(credentials.revokedAt)))
      .returning({ id: credentials.id });
    return rows.length > 0;
  }

  /** Which of these grant targets exist in the workspace and are not revoked. */
  async liveTargets(
    workspaceId: string,
    installationIds: readonly string[],
    credentialIds: readonly string[],
  ): Promise<{ installations: Set<string>; credentials: Set<string> }> {
    return {
      installations: await this.liveIds(installations, workspaceId, installationIds),
      credentials: await this.liveIds(credentials, workspaceId, credentialIds),
    };
  }

  private async liveIds(
    table: typeof installations | typeof credentials,
    workspaceId: string,
    ids: readonly string[],
  ): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.db
      .select({ id: table.id })
      .from(table)
      .where(and(eq(table.workspaceId, workspaceId), inArray(table.id, [...ids]), isNull(table.revokedAt)));
    return new Set(rows.map((row) => row.id));
  }
}
