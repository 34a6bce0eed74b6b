import type {
  Change,
  ChangeSubject,
  Credential,
  Evidence,
  EvidenceDeletionReceipt,
  Grant,
  GrantTarget,
  Installation,
  Member,
  Memory,
  MemoryDeletionReceipt,
  MemoryView,
  Namespace,
  Revision,
  Verification,
  Webhook,
  Workspace,
} from '@tms/catalog';
import type { VerificationPage } from '@tms/domain';
import { builder } from './builder';
import type { At } from './context';

/**
 * Every object type's ref, declared before any is implemented (each in its own file under
 * `types/`), so that types may refer to each other without import cycles.
 */

export type Attestation = NonNullable<Revision['attestation']>;
export type Invalidation = NonNullable<Revision['invalidation']>;
export type EvidenceModel = At<Evidence> & { readonly $page?: VerificationPage };
export interface MeModel {
  actor: { id: string; issuer: string; subject: string };
  caller_kind: string;
  workspace_id: string | null;
  scopes: string[];
}
export interface EnrollmentModel {
  can_create_workspace: boolean;
  policy: string;
}
export interface MemoryReadModel {
  view: At<MemoryView>;
  as_of: number;
  known_at: number;
}
export interface MemoryListItemModel {
  memory: Memory;
  revision: Revision;
  stale: boolean;
}
/** A page of `changes.list`, as the query answers it and as each subscription event carries it. */
export interface ChangePageModel {
  changes: Change[];
  next_after: number;
  head_sequence: number;
}
export interface CommitModel {
  sequence: number;
  recorded_at: number;
}

export const WorkspaceRef = builder.objectRef<At<Workspace>>('Workspace');
export const EnrollmentRef = builder.objectRef<EnrollmentModel>('Enrollment');
export const MemberRef = builder.objectRef<At<Member>>('Member');
export const InstallationRef = builder.objectRef<At<Installation>>('Installation');
export const CredentialRef = builder.objectRef<At<Credential>>('Credential');
export const WebhookRef = builder.objectRef<At<Webhook>>('Webhook');
export const ActorRef = builder.objectRef<MeModel['actor']>('Actor');
export const MeRef = builder.objectRef<MeModel>('Me');
export const NamespaceRef = builder.objectRef<At<Namespace>>('Namespace');
export const GrantRef = builder.objectRef<At<Grant>>('Grant');
export const ActorGrantTargetRef = builder.objectRef<Extract<GrantTarget, { kind: 'actor' }>>('ActorGrantTarget');
export const InstallationGrantTargetRef =
  builder.objectRef<Extract<GrantTarget, { kind: 'installation' }>>('InstallationGrantTarget');
export const CredentialGrantTargetRef =
  builder.objectRef<Extract<GrantTarget, { kind: 'credential' }>>('CredentialGrantTarget');
export const EvidenceRef = builder.objectRef<EvidenceModel>('Evidence');
export const VerificationRef = builder.objectRef<At<Verification>>('Verification');
export const MemoryRef = builder.objectRef<At<Memory>>('Memory');
export const MemoryRevisionRef = builder.objectRef<At<Revision>>('MemoryRevision');
export const AttestationRef = builder.objectRef<At<Attestation>>('Attestation');
export const InvalidationRef = builder.objectRef<At<Invalidation>>('Invalidation');
export const MemoryViewRef = builder.objectRef<At<MemoryView>>('MemoryView');
export const MemoryReadRef = builder.objectRef<MemoryReadModel>('MemoryRead');
export const MemoryListItemRef = builder.objectRef<At<MemoryListItemModel>>('MemoryListItem');
export const CommitRef = builder.objectRef<CommitModel>('Commit');
export const ChangeRef = builder.objectRef<Change>('Change');
export const ChangeSubjectRef = builder.objectRef<ChangeSubject>('ChangeSubject');
export const ChangePageRef = builder.objectRef<ChangePageModel>('ChangePage');
export const MemoryDeletionReceiptRef = builder.objectRef<At<MemoryDeletionReceipt>>('MemoryDeletionReceipt');
export const EvidenceDeletionReceiptRef = builder.objectRef<At<EvidenceDeletionReceipt>>('EvidenceDeletionReceipt');

export const WorkspaceConnection = builder.connectionObject(
  {
    type: WorkspaceRef,
    name: 'WorkspaceConnection',
    description: 'A page of `workspaces.list`, with the caller’s enrollment.',
    fields: (t) => ({
      enrollment: t.field({
        type: EnrollmentRef,
        resolve: (page) => (page as unknown as { enrollment: EnrollmentModel }).enrollment,
      }),
    }),
  },
  { name: 'WorkspaceEdge' },
);
export const NamespaceConnection = builder.connectionObject(
  { type: NamespaceRef, name: 'NamespaceConnection', description: 'A page of `namespaces.list`.' },
  { name: 'NamespaceEdge' },
);
export const MemoryRevisionConnection = builder.connectionObject(
  { type: MemoryRevisionRef, name: 'MemoryRevisionConnection', description: 'A page of `memories.history`.' },
  { name: 'MemoryRevisionEdge' },
);
export const MemoryListConnection = builder.connectionObject(
  { type: MemoryListItemRef, name: 'MemoryListConnection', description: 'A page of `memories.list`.' },
  { name: 'MemoryListEdge' },
);
export const VerificationConnection = builder.connectionObject(
  {
    type: VerificationRef,
    name: 'VerificationConnection',
    description: 'A page of an evidence item’s verifications, oldest first, 32 a page (as `evidence.get`).',
  },
  { name: 'VerificationEdge' },
);
