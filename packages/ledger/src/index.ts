export { canonicalJson } from './canonical-json';
export {
  type ChainBreak,
  type CommitDigestInput,
  commitDigest,
  type DigestRecord,
  GENESIS_CHAIN_HASH,
  nextChainHash,
  type RecordKind,
  recordKindOf,
  sha256Hex,
  walkChain,
} from './chain';
export { type ChangedField, explainBrokenCommit } from './chain-diagnosis';
export { type ChainingProgress, chainOlderLedgers } from './chain-migration';
export {
  type Database,
  type DatabaseHandle,
  NOT_READY,
  type OpenOptions,
  openDatabase,
  type Readiness,
} from './database';
export {
  CROSS_WORKSPACE_STATEMENTS,
  DISTRIBUTION_COLUMN,
  PARTITION_COUNT,
  type Placement,
  TABLE_PLACEMENT,
} from './distribution';
export { EmbeddedLedgerLockedError, embeddedLockHolder, type LockHolder } from './embedded-lock';
export { newId } from './ids';
export {
  citusStatements,
  type DatabaseLayout,
  type MigrateOptions,
  partitionedStatements,
  partitionNames,
} from './layout';
export { isKeyHeldViolation, Ledger } from './ledger';
export {
  LEFT_BEHIND_BY_MOVE,
  MoveTarget,
  movedTables,
  REPLACED_BY_MOVE,
  type TableRows,
  TargetHoldsLedgerError,
  TargetUnreachableError,
} from './move';
export { decodePathKey, encodePathKey } from './path-key';
export type {
  ActorRow,
  CommitRow,
  CredentialRow,
  DeletionReceiptRow,
  EvidenceRow,
  GrantRow,
  GrantTarget,
  IdempotencyRecord,
  InstallationRow,
  MemoryRow,
  NamespaceRow,
  RevisionRow,
  Role,
  VerificationRow,
  Visibility,
  WebhookRow,
  WorkspaceRow,
} from './rows';
export { jsonValue, rowsOf } from './rows';
export * as schema from './schema';
export type { ChainedCommit, ChainHead } from './storage/chain-storage';
export {
  type Change,
  type ChangeQuery,
  type ChangeSubject,
  SUBJECT_TYPES,
  type SubjectType,
  subjectTypeOf,
  WORKSPACE_LEVEL_TYPES,
} from './storage/change-storage';
export { type AllocatedStamp, COMMIT_CHANNEL, type CommitStamp } from './storage/commit-storage';
export type { ListPosition } from './storage/credential-storage';
export type { ExportPage, ExportScope } from './storage/export-storage';
export type { KeyScope } from './storage/idempotency-storage';
export type { IndexLag } from './storage/index-state-storage';
export { collectingStores, consecutiveStamps, InsertCollector } from './storage/insert-collector';
export type { MemberRow } from './storage/membership-storage';
export type { RevisionsAsKnown } from './storage/memory-storage';
export type { Standing, StandingQuery } from './storage/read-view';
export type { DueWebhook, FailureOutcome } from './storage/webhook-storage';
export { Stores } from './stores';
export {
  type ChainVerdict,
  type ExportedCommit,
  VERIFY_BATCH,
  type VerifyOptions,
  verifyExportLines,
  verifyWorkspaceChain,
} from './verify-chain';
