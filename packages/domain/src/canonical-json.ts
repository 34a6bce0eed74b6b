/** The ledger defines the canonical form (its chain digests use it); idempotency fingerprints share it. */
export { canonicalJson } from '@tms/ledger';
