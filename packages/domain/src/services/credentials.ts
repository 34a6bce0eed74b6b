import { mintCredentialSecret } from '@tms/auth';
import type {
  credentialsCreate,
  credentialsList,
  credentialsRevoke,
  installationsCreate,
  installationsList,
  installationsRevoke,
  OperationInput,
  OperationOutput,
} from '@tms/catalog';
import { type ListPosition, newId } from '@tms/ledger';
import type { WorkspaceAccess } from '../access';
import { CREDENTIAL_ISSUER } from '../caller';
import { type HandlerContext, requireAccess } from '../context';
import { DomainError } from '../errors';
import { presentCommit, presentCredential, presentInstallation } from '../present';

/**
 * Installations, installation credentials and service keys: issued and revoked by workspace
 * admins only. Every issuance and revocation is a ledger commit; a credential's secret is
 * minted here, returned once, and only its SHA-256 is stored.
 */

export function requireWorkspaceAdmin(ctx: HandlerContext): WorkspaceAccess {
  const access = requireAccess(ctx);
  if (!access.isAdmin) throw new DomainError('forbidden', 'workspace admins only');
  return access;
}

/** One page of a (created_at, id)-ordered listing, and the cursor that continues it. */
export async function page<Row extends ListPosition>(
  ctx: HandlerContext,
  scope: string,
  input: { limit: number; cursor?: string | undefined },
  load: (after: ListPosition | null, limit: number) => Promise<Row[]>,
): Promise<{ rows: Row[]; next_cursor: string | null }> {
  const after = ctx.cursors.decode<{ c: number; i: string }>(scope, input.cursor);
  const rows = await load(after && { createdAt: after.c, id: after.i }, input.limit + 1);
  const shown = rows.slice(0, input.limit);
  const last = shown.at(-1);
  return {
    rows: shown,
    next_cursor:
      rows.length > input.limit && last ? ctx.cursors.encode(scope, { c: last.createdAt, i: last.id }) : null,
  };
}

export async function listInstallations(
  input: OperationInput<typeof installationsList>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof installationsList>> {
  const access = requireWorkspaceAdmin(ctx);
  const { rows, next_cursor } = await page(ctx, `installations.list:${access.workspaceId}`, input, (after, limit) =>
    ctx.stores.credentials.listInstallations(access.workspaceId, after, limit),
  );
  return { installations: rows.map(presentInstallation), next_cursor };
}

export async function createInstallation(
  input: OperationInput<typeof installationsCreate>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof installationsCreate>> {
  const access = requireWorkspaceAdmin(ctx);
  const id = newId('ins');
  const stamp = await ctx.commit(access.workspaceId, [id]);
  const row = {
    workspaceId: access.workspaceId,
    id,
    name: input.name,
    createdAt: stamp.recordedAt,
    createdBy: ctx.caller.actorId,
    revokedAt: null,
  };
  await ctx.stores.credentials.insertInstallation(row);
  return { installation: presentInstallation(row), commit: presentCommit(stamp) };
}

export async function revokeInstallation(
  input: OperationInput<typeof installationsRevoke>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof installationsRevoke>> {
  const access = requireWorkspaceAdmin(ctx);
  const row = await ctx.stores.credentials.getInstallation(access.workspaceId, input.id);
  if (!row) throw new DomainError('not_found');
  if (row.revokedAt !== null) return { installation: presentInstallation(row), commit: null };
  const stamp = await ctx.commit(access.workspaceId, [row.id]);
  await ctx.stores.credentials.revokeInstallation(access.workspaceId, row.id, stamp.recordedAt);
  return { installation: presentInstallation({ ...row, revokedAt: stamp.recordedAt }), commit: presentCommit(stamp) };
}

export async function listCredentials(
  input: OperationInput<typeof credentialsList>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof credentialsList>> {
  const access = requireWorkspaceAdmin(ctx);
  const installationId = input.product_installation_id;
  const scope = `credentials.list:${access.workspaceId}:${installationId ?? ''}`;
  const { rows, next_cursor } = await page(ctx, scope, input, (after, limit) =>
    ctx.stores.credentials.listCredentials(access.workspaceId, { installationId }, after, limit),
  );
  return { credentials: rows.map(presentCredential), next_cursor };
}

export async function createCredential(
  input: OperationInput<typeof credentialsCreate>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof credentialsCreate>> {
  const access = requireWorkspaceAdmin(ctx);
  const { stores } = ctx;
  let installationId: string | null = null;
  if (input.kind === 'installation') {
    if (input.product_installation_id === undefined) {
      throw new DomainError(
        'invalid_input',
        'body.product_installation_id: is required for an installation credential',
      );
    }
    const installation = await stores.credentials.getInstallation(access.workspaceId, input.product_installation_id);
    if (!installation) throw new DomainError('not_found', 'no such installation');
    if (installation.revokedAt !== null) throw new DomainError('conflict', 'the installation was revoked');
    installationId = installation.id;
  } else if (input.product_installation_id !== undefined) {
    throw new DomainError('invalid_input', 'body.product_installation_id: a service key belongs to no installation');
  }
  if (input.namespace_ids !== null) {
    const found = await stores.namespaces.getMany(access.workspaceId, input.namespace_ids);
    if (found.length !== input.namespace_ids.length) throw new DomainError('not_found', 'no such namespace');
  }
  const now = await ctx.now();
  if (input.expires_at !== null && input.expires_at <= now) {
    throw new DomainError('invalid_input', 'body.expires_at: must be in the future');
  }

  const minted = mintCredentialSecret(input.kind);
  const actor = await stores.directory.findOrCreateActor(CREDENTIAL_ISSUER, minted.credentialId, now);
  const stamp = await ctx.commit(access.workspaceId, [minted.credentialId]);
  const row = {
    workspaceId: access.workspaceId,
    id: minted.credentialId,
    kind: input.kind,
    installationId,
    name: input.name,
    actorId: actor.id,
    secretSha256: minted.sha256,
    capabilities: input.capabilities,
    namespaceIds: input.namespace_ids,
    expiresAt: input.expires_at,
    createdAt: stamp.recordedAt,
    createdBy: ctx.caller.actorId,
    revokedAt: null,
  };
  await stores.credentials.insertCredential(row);
  return { credential: presentCredential(row), secret: minted.secret, commit: presentCommit(stamp) };
}

export async function revokeCredential(
  input: OperationInput<typeof credentialsRevoke>,
  ctx: HandlerContext,
): Promise<OperationOutput<typeof credentialsRevoke>> {
  const access = requireWorkspaceAdmin(ctx);
  const row = await ctx.stores.credentials.getCredential(access.workspaceId, input.id);
  if (!row) throw new DomainError('not_found');
  if (row.revokedAt !== null) return { credential: presentCredential(row), commit: null };
  const stamp = await ctx.commit(access.workspaceId, [row.id]);
  await ctx.stores.credentials.revokeCredential(access.workspaceId, row.id, stamp.recordedAt);
  return { credential: presentCredential({ ...row, revokedAt: stamp.recordedAt }), commit: presentCommit(stamp) };
}
