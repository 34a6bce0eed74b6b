import type { OperationSpec } from './operation';

/**
 * One sentence per input field of the catalog's operations, for agents and generated docs: by
 * field name, where a name means the same in every operation that takes it. Times are Unix
 * seconds (UTC, fractions allowed) throughout.
 */
const BY_FIELD: Readonly<Record<string, string>> = {
  limit: 'How many items one page holds at most.',
  cursor: 'The next_cursor of the previous page, to read the page after it.',
  grants: 'The complete new grant list: every grant left out is revoked (read the list first to keep it).',
  members: 'The complete new member list with roles: every member left out loses access.',
  source_locator: 'Where the excerpt comes from (a URL, a file path or any locator of the source).',
  content_root_sha256: 'The SHA-256 (hex) of the whole source the excerpt was taken from.',
  excerpt: 'The exact text taken from the source, byte for byte.',
  expected_content_root_sha256: 'The source hash the verifier computed; it must equal the recorded one.',
  expected_excerpt_sha256: 'The excerpt hash the verifier computed; it must equal the recorded one.',
  verdict: 'Whether the excerpt is faithful to its source (verified) or not (rejected).',
  valid_from: 'When the memory starts to hold in the world, in Unix seconds.',
  valid_to: 'When the memory stops holding in the world, in Unix seconds; null for open-ended.',
  support_revision_ids: 'Revisions of other memories this one rests on; correcting or deleting them invalidates it.',
  as_of: 'The world time to read at, in Unix seconds (default: now).',
  known_at: 'The record time to read at, in Unix seconds: what the service knew then (default: now).',
  include_evidence: 'Whether to include the evidence and verifications behind the revision.',
  expected_generation: "The memory's current generation, so that a concurrent change is refused as a conflict.",
  verification_ids: 'Verifications (verdict verified) of the evidence that back the attestation.',
  dry_run: 'Report what would change without changing anything.',
  mode: 'retract (hide from now on, history kept) or purge (erase the text for good, a receipt remains).',
  query: 'What to look for, in plain words.',
  kinds: 'Only memories of these kinds (default: every kind).',
  budget: 'How much to answer at most: max_items memories and max_context_chars characters of their text.',
  min_sequence: 'A commit sequence (of your last write) the index must have reached before recall answers.',
  on_pending: 'When the index is behind: report it in status (report) or fail with projection_pending (error).',
  capabilities: 'What the credential may do at most: read, observe, verify, correct, forget, admin.',
  expires_at: 'When the credential stops working, in Unix seconds (default: never).',
  after: 'The sequence to continue after: next_after of the previous answer (0, the default, starts at the beginning).',
  url: 'The address the change notifications are posted to.',
  description: 'A note to recognise the webhook by.',
};

/** Where a field means something of its own in one operation: `operation name` → field → sentence. */
const BY_OPERATION: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  'workspaces.create': { name: 'The name of the new workspace.' },
  'namespaces.list': { parent_id: 'List only the children of this namespace (default: every readable namespace).' },
  'namespaces.create': {
    parent_id: 'The namespace to create it under, or null for a root namespace.',
    name: 'The name of the new namespace, unique among its siblings.',
  },
  'namespaces.update': { name: 'The new name of the namespace.' },
  'evidence.create': { namespace_id: 'The namespace to record the evidence in.' },
  'memories.create': {
    namespace_id: 'The namespace to write the memory into.',
    kind: 'claim (a fact), episode (an event) or procedure (how to do something).',
    text: 'The memory itself, in plain words.',
    evidence_ids: 'Evidence backing the memory; verified evidence makes it asserted rather than candidate.',
    key: "Your own name for the memory, unique among the namespace's current memories; a held key is a conflict.",
  },
  'memories.correct': {
    text: 'The corrected text of the memory.',
    evidence_ids: 'Evidence backing the corrected revision.',
  },
  'memories.attest': { evidence_ids: 'The evidence the attestation rests on.' },
  'memories.list': {
    namespace_id: 'The namespace whose memories to list.',
    kind: 'Only memories of this kind (default: every kind).',
    key: 'Only the memory holding this key (exact match), as seen at as_of and known_at.',
  },
  recall: {
    namespace_ids: 'The namespaces to search.',
    include_descendants: 'Whether to search the namespaces below them too.',
    wait_ms: 'How long to wait, in milliseconds, for the index to reach min_sequence.',
  },
  'changes.list': {
    namespace_id: 'Only changes in this namespace (and below it, with include_descendants).',
    include_descendants: 'Whether changes in the namespaces below namespace_id count too.',
    wait_ms: 'How long to wait, in milliseconds, for a change when there is none yet.',
  },
  'ledger.proof': {
    id: 'The id of the revision, evidence or verification to prove.',
    head_sequence: 'The sequence of the head to prove against (a head kept earlier); the latest by default.',
  },
  'installations.create': { name: 'The name of the product being installed.' },
  'credentials.list': { product_installation_id: "Only this installation's credentials." },
  'credentials.create': {
    kind: 'installation (a credential of a product installation) or service_key (a key of the workspace itself).',
    product_installation_id: 'The installation the credential belongs to (kind installation only).',
    name: 'A name to recognise the credential by.',
    namespace_ids: 'The namespaces the credential is limited to (default: wherever its grants reach).',
  },
  'webhooks.create': { namespace_id: 'Only changes in this namespace and below it (default: the whole workspace).' },
};

/** What `{id}` in a path names, by the path segment before it. */
const ID_SUBJECTS: Readonly<Record<string, string>> = {
  workspaces: 'workspace',
  namespaces: 'namespace',
  evidence: 'evidence item',
  memories: 'memory',
  installations: 'installation',
  credentials: 'credential',
  webhooks: 'webhook',
};

/** The one-sentence description of an operation's input field, or undefined when the catalog has none. */
export function fieldDescription(operation: Pick<OperationSpec, 'name' | 'path'>, field: string): string | undefined {
  const own = BY_OPERATION[operation.name]?.[field];
  if (own) return own;
  if (field === 'id') {
    const segment = /\/v1\/([a-z_]+)\/\{id\}/.exec(operation.path)?.[1];
    const subject = segment && ID_SUBJECTS[segment];
    return subject ? `The id of the ${subject}.` : undefined;
  }
  return BY_FIELD[field];
}
