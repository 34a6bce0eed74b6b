import type { EnumRef } from '@pothos/core';
import {
  armStateSchema,
  CAPABILITIES,
  CHANGE_SUBJECT_TYPES,
  callerKindSchema,
  credentialKindSchema,
  MEMORY_KINDS,
  memberRoleSchema,
  recallModeSchema,
  verdictSchema,
  webhookStateSchema,
} from '@tms/catalog';
import { builder } from './builder';

/**
 * GraphQL enums for the catalog's string enums. Values are the spec's own strings (`claim`,
 * `support_corrected`, ...), so a GraphQL answer and a `/v1` answer carry the same text. There
 * is one enum type per set of values: the named ones below keep their names, and an enum first
 * met in an operation's input or output is named after the operation (see `operations/`).
 */
// biome-ignore lint/suspicious/noExplicitAny: enum refs of every value set share one registry.
type AnyEnumRef = EnumRef<any, string, string>;

const byValues = new Map<string, AnyEnumRef>();

export function enumOf(name: string, values: readonly string[], description?: string): AnyEnumRef {
  const key = [...values].sort().join('|');
  const existing = byValues.get(key);
  if (existing) return existing;
  const ref = builder.enumType(name, {
    description,
    values: Object.fromEntries(values.map((value) => [value, { value }])),
  }) as AnyEnumRef;
  byValues.set(key, ref);
  return ref;
}

export const MemoryKindEnum = enumOf('MemoryKind', MEMORY_KINDS, 'What a memory records.');
export const CapabilityEnum = enumOf('Capability', CAPABILITIES, 'A capability on a namespace.');
export const VerdictEnum = enumOf('Verdict', verdictSchema.options, 'The outcome of a verification.');
export const MemberRoleEnum = enumOf('MemberRole', memberRoleSchema.options, 'A member’s role in a workspace.');
export const CallerKindEnum = enumOf('CallerKind', callerKindSchema.options, 'How the caller authenticated.');
export const RevisionStatusEnum = enumOf('RevisionStatus', ['candidate', 'asserted'], 'A revision’s status.');
export const InvalidationReasonEnum = enumOf(
  'InvalidationReason',
  ['support_corrected', 'support_deleted'],
  'Why a revision went stale.',
);
export const GrantTargetKindEnum = enumOf(
  'GrantTargetKind',
  ['actor', 'installation', 'credential'],
  'Whom a grant names.',
);
export const WebhookStateEnum = enumOf(
  'WebhookState',
  webhookStateSchema.options,
  'Whether deliveries run (`active`), stopped after the retry window (`disabled`), or the webhook was deleted.',
);
export const CredentialKindEnum = enumOf(
  'CredentialKind',
  credentialKindSchema.options,
  'An installation credential or a workspace-bound service key.',
);
export const ChangeSubjectTypeEnum = enumOf(
  'ChangeSubjectType',
  CHANGE_SUBJECT_TYPES,
  'What a change names; members, grants, installations, credentials, webhooks and the workspace are workspace-level.',
);
export const RecallModeEnum = enumOf(
  'RecallMode',
  recallModeSchema.options,
  'Which ranking arms recall asks: both fused (`hybrid`), or `lexical` or `semantic` alone.',
);
export const RetrievalStateEnum = enumOf(
  'RetrievalState',
  armStateSchema.options,
  'How a recall arm took part: `ok`, `off` (by configuration or not asked by the mode) or `unavailable` (failed).',
);
