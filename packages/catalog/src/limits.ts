/** Per-operation attributes shared by every operation of the catalog (interface.md, Limits). */
export const OPERATION_LIMITS = {
  maxRequestBytes: 262144,
  maxResponseBytes: 1048576,
  timeoutMs: 10000,
  attempts: 1,
  cost: 1,
  candidateBudget: 0,
  providerCallBudget: 0,
  contextCharBudget: 0,
} as const;

/** Items in one view, attestation, or list of references. */
export const MAX_REFERENCES = 32;
/** Items in one page of a list. */
export const MAX_PAGE_ITEMS = 100;
/** Namespace nesting (display_path items). */
export const MAX_NAMESPACE_DEPTH = 32;
