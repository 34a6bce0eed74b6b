import type { Operation, OperationInput, OperationName } from '@tms/catalog';
import type { HandlerContext } from './context';
import { listChanges } from './services/changes';
import {
  createCredential,
  createInstallation,
  listCredentials,
  listInstallations,
  revokeCredential,
  revokeInstallation,
} from './services/credentials';
import { createEvidence, getEvidence, verifyEvidence } from './services/evidence';
import { getLedgerHead, getLedgerProof } from './services/ledger';
import { attestMemory, correctMemory, forgetEvidence, forgetMemory, listMemories } from './services/lifecycle';
import { getMe } from './services/me';
import { createMemory, getMemory, memoryHistory } from './services/memories';
import {
  createNamespace,
  getNamespace,
  listGrants,
  listNamespaces,
  putGrants,
  updateNamespace,
} from './services/namespaces';
import { recallMemories } from './services/recall';
import { createWebhook, deleteWebhook, listWebhooks } from './services/webhooks';
import { createWorkspace, listWorkspaces, putMembers } from './services/workspaces';

type HandlerOf<Name extends OperationName> = (
  input: OperationInput<Extract<Operation, { name: Name }>>,
  ctx: HandlerContext,
) => Promise<object>;

/** One handler per catalog operation; the compiler checks that none is missing. */
export const HANDLERS: { [Name in OperationName]: HandlerOf<Name> } = {
  'workspaces.list': listWorkspaces,
  'workspaces.create': createWorkspace,
  'workspaces.members.put': putMembers,
  'me.get': getMe,
  'namespaces.list': listNamespaces,
  'namespaces.create': createNamespace,
  'namespaces.get': getNamespace,
  'namespaces.update': updateNamespace,
  'namespaces.grants.put': putGrants,
  'namespaces.grants.list': listGrants,
  'evidence.create': createEvidence,
  'evidence.get': getEvidence,
  'evidence.verify': verifyEvidence,
  'memories.create': createMemory,
  'memories.get': getMemory,
  'memories.history': memoryHistory,
  'memories.list': listMemories,
  'memories.attest': attestMemory,
  'memories.correct': correctMemory,
  'memories.forget': forgetMemory,
  'evidence.forget': forgetEvidence,
  recall: recallMemories,
  'installations.list': listInstallations,
  'installations.create': createInstallation,
  'installations.revoke': revokeInstallation,
  'credentials.list': listCredentials,
  'credentials.create': createCredential,
  'credentials.revoke': revokeCredential,
  'changes.list': listChanges,

  'webhooks.list': listWebhooks,
  'webhooks.create': createWebhook,
  'webhooks.delete': deleteWebhook,
  'ledger.head': getLedgerHead,
  'ledger.proof': getLedgerProof,
};
