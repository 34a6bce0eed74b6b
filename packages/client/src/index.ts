export {
  type ClientOptions,
  createClient,
  type OperationError,
  type PagedOperationName,
  type PageItem,
  type RecallWhenIndexedOptions,
  type RetryEvent,
  type SequenceRef,
  type TmsClient,
} from './client';
export { isTmsError, TmsError, type TmsErrorFields, TmsNetworkError } from './errors';
export * from './generated';
export {
  type LedgerHead,
  type LedgerJwk,
  type LedgerProof,
  type ProofVerdict,
  type SignedLedgerHead,
  type VerifyProofOptions,
  verifyLedgerHead,
  verifyProof,
} from './ledger-proof';
export type { CallOptions } from './options';
export { type AttemptFailure, DEFAULT_RETRY, mayRetry, type RetryOptions, type RetryTraits } from './retry';
export { verifyWebhookSignature } from './webhooks';
