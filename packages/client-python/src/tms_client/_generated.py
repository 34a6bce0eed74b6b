# Generated from schema/openapi.json by `pnpm generate` (scripts/generate-python-client.ts). Do not edit.
"""Types of every input and output, the operation table, and one method per operation of the /v1 API."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, TypedDict, cast, final, overload

from ._base import NOT_GIVEN, ErrorInfo, NotGiven, OperationSpec, Pager, SequenceRef, given

if sys.version_info >= (3, 11):
    from typing import NotRequired
elif TYPE_CHECKING:  # Python 3.10: only ever read by type checkers (annotations are not evaluated)
    from typing_extensions import NotRequired

ErrorCode: TypeAlias = Literal["budget_exceeded", "conflict", "enrollment_required", "forbidden", "idempotency_conflict", "idempotency_required", "internal", "invalid_input", "method_not_allowed", "not_found", "projection_pending", "rate_limited", "unauthenticated", "unavailable"]
"""Every error code of the service."""

ERROR_TABLE: Final[Mapping[ErrorCode, ErrorInfo]] = {
    "budget_exceeded": ErrorInfo(status=413, retryable=False, message="The request exceeds an operation limit."),
    "conflict": ErrorInfo(status=409, retryable=False, message="The resource changed. Reload before retrying."),
    "enrollment_required": ErrorInfo(status=403, retryable=False, message="Workspace creation requires pilot enrollment."),
    "forbidden": ErrorInfo(status=403, retryable=False, message="This operation is not permitted."),
    "idempotency_conflict": ErrorInfo(status=409, retryable=False, message="The idempotency key was used for a different request."),
    "idempotency_required": ErrorInfo(status=400, retryable=False, message="An idempotency key is required."),
    "internal": ErrorInfo(status=500, retryable=False, message="The request could not be completed."),
    "invalid_input": ErrorInfo(status=400, retryable=False, message="The request is invalid."),
    "method_not_allowed": ErrorInfo(status=405, retryable=False, message="This method is not supported."),
    "not_found": ErrorInfo(status=404, retryable=False, message="The resource was not found."),
    "projection_pending": ErrorInfo(status=409, retryable=True, message="The search projection is catching up."),
    "rate_limited": ErrorInfo(status=429, retryable=True, message="Too many requests. Retry later."),
    "unauthenticated": ErrorInfo(status=401, retryable=False, message="Authentication is required."),
    "unavailable": ErrorInfo(status=503, retryable=True, message="The service is temporarily unavailable."),
}
"""HTTP status, retryability and message of every error code (decisions.md §7)."""

@final
class Actor(TypedDict):
    id: str
    issuer: str
    subject: str


@final
class Attestation(TypedDict):
    claim_sha256: str
    claim_text: str
    evidence_ids: list[str]
    id: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    recorded_at: float
    verification_ids: list[str]
    verifier_actor_id: str


@final
class Commit(TypedDict):
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    recorded_at: float
    sequence: int


@final
class Evidence(TypedDict):
    content_root_sha256: str
    excerpt: str
    excerpt_sha256: str
    id: str
    namespace_id: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    recorded_at: float
    recorder_actor_id: str
    source_locator: str


@final
class EvidenceDeletionReceipt(TypedDict):
    erased_excerpt_sha256: str
    evidence_id: str
    id: str
    mode: Literal["purge"]
    namespace_id: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    recorded_at: float
    recorder_actor_id: str


@final
class Grant(TypedDict):
    capabilities: list[Literal["read", "observe", "verify", "correct", "forget", "admin"]]
    inherit: bool
    target: GrantTarget


@final
class GrantTargetActor(TypedDict):
    actor_id: str
    kind: Literal["actor"]


@final
class GrantTargetInstallation(TypedDict):
    kind: Literal["installation"]
    product_installation_id: str


@final
class GrantTargetCredential(TypedDict):
    credential_id: str
    kind: Literal["credential"]


GrantTarget: TypeAlias = "GrantTargetActor | GrantTargetInstallation | GrantTargetCredential"


@final
class Invalidation(TypedDict):
    cause_revision_id: str
    reason: Literal["support_corrected", "support_deleted"]
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    recorded_at: float


@final
class Member(TypedDict):
    actor_id: str
    role: Literal["admin", "member"]


@final
class Memory(TypedDict):
    generation: int
    id: str
    key: str | None
    kind: Literal["claim", "episode", "procedure"]
    namespace_id: str


@final
class MemoryDeletionReceipt(TypedDict):
    erased_key_sha256: NotRequired[str]
    erased_text_sha256: list[str]
    id: str
    memory_id: str
    mode: Literal["purge"]
    namespace_id: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    recorded_at: float
    recorder_actor_id: str
    revision_ids: list[str]


@final
class MemoryListItem(TypedDict):
    memory: Memory
    revision: Revision
    stale: bool


@final
class MemoryView(TypedDict):
    evidence: list[Evidence]
    memory: Memory
    revision: Revision
    stale: bool
    verifications: list[Verification]


@final
class Namespace(TypedDict):
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    created_at: float
    display_path: list[str]
    id: str
    name: str
    parent_id: str | None
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    updated_at: float
    workspace_id: str


@final
class Revision(TypedDict):
    attestation: Attestation | None
    evidence_ids: list[str]
    generation: int
    id: str
    invalidation: Invalidation | None
    kind: Literal["claim", "episode", "procedure"]
    memory_id: str
    namespace_id: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    recorded_at: float
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    recorded_until: float | None
    status: Literal["candidate", "asserted"]
    support_revision_ids: list[str]
    text: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    valid_from: float
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    valid_to: float | None


@final
class Verification(TypedDict):
    content_root_sha256: str
    evidence_id: str
    excerpt_sha256: str
    id: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    recorded_at: float
    verdict: Literal["verified", "rejected"]
    verifier_actor_id: str


@final
class Workspace(TypedDict):
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    created_at: float
    id: str
    name: str


@final
class ChangesListInput(TypedDict):
    """Input of `changes.list`: its path, query and body fields in one dict."""
    #: List the changes after this sequence: the `next_after` of the previous page, 0 to start.
    after: NotRequired[int]
    #: Items per page.
    limit: NotRequired[int]
    #: Only items in this namespace.
    namespace_id: NotRequired[str]
    #: With `namespace_id`: also the namespaces below it.
    include_descendants: NotRequired[bool]
    #: When no change follows `after` yet, wait up to this long for the next commit.
    wait_ms: NotRequired[int]


@final
class ChangesListOutput(TypedDict):
    """Answer of `changes.list`."""
    changes: list[ChangesListOutputChange]
    head_sequence: int
    next_after: int


@final
class ChangesListOutputChange(TypedDict):
    actor_id: str
    operation: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    recorded_at: float
    sequence: int
    subjects: list[ChangesListOutputChangeSubject]


@final
class ChangesListOutputChangeSubject(TypedDict):
    id: str
    namespace_id: str | None
    type: Literal["workspace", "namespace", "evidence", "verification", "memory", "revision", "grant", "receipt", "member", "installation", "credential", "webhook"]


@final
class CredentialsCreateInput(TypedDict):
    """Input of `credentials.create`: its path, query and body fields in one dict."""
    capabilities: list[Literal["read", "observe", "verify", "correct", "forget", "admin"]]
    kind: Literal["installation", "service_key"]
    name: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    expires_at: NotRequired[float | None]
    namespace_ids: NotRequired[list[str] | None]
    product_installation_id: NotRequired[str]


@final
class CredentialsCreateOutput(TypedDict):
    """Answer of `credentials.create`."""
    commit: Commit
    credential: CredentialsCreateOutputCredential
    secret: str | None


@final
class CredentialsCreateOutputCredential(TypedDict):
    actor_id: str
    capabilities: list[Literal["read", "observe", "verify", "correct", "forget", "admin"]]
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    created_at: float
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    expires_at: float | None
    id: str
    kind: Literal["installation", "service_key"]
    name: str
    namespace_ids: list[str] | None
    product_installation_id: str | None
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    revoked_at: float | None
    workspace_id: str


@final
class CredentialsListInput(TypedDict):
    """Input of `credentials.list`: its path, query and body fields in one dict."""
    #: Items per page.
    limit: NotRequired[int]
    #: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
    cursor: NotRequired[str]
    #: Only the credentials of this product installation.
    product_installation_id: NotRequired[str]


@final
class CredentialsListOutput(TypedDict):
    """Answer of `credentials.list`."""
    credentials: list[CredentialsCreateOutputCredential]
    next_cursor: str | None


@final
class CredentialsRevokeInput(TypedDict):
    """Input of `credentials.revoke`: its path, query and body fields in one dict."""
    #: Id of the service key addressed.
    id: str


@final
class CredentialsRevokeOutput(TypedDict):
    """Answer of `credentials.revoke`."""
    commit: Commit | None
    credential: CredentialsCreateOutputCredential


@final
class EvidenceCreateInput(TypedDict):
    """Input of `evidence.create`: its path, query and body fields in one dict."""
    content_root_sha256: str
    excerpt: str
    namespace_id: str
    source_locator: str


@final
class EvidenceCreateOutput(TypedDict):
    """Answer of `evidence.create`."""
    commit: Commit
    evidence: Evidence


@final
class EvidenceForgetInput(TypedDict):
    """Input of `evidence.forget`: its path, query and body fields in one dict."""
    #: Id of the evidence addressed.
    id: str
    dry_run: NotRequired[bool]


@final
class EvidenceForgetOutput(TypedDict):
    """Answer of `evidence.forget`."""
    commit: Commit | None
    receipt: EvidenceDeletionReceipt


@final
class EvidenceGetInput(TypedDict):
    """Input of `evidence.get`: its path, query and body fields in one dict."""
    #: Id of the evidence addressed.
    id: str
    #: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
    cursor: NotRequired[str]


@final
class EvidenceGetOutput(TypedDict):
    """Answer of `evidence.get`."""
    evidence: Evidence
    next_cursor: str | None
    verifications: list[Verification]


@final
class EvidenceVerifyInput(TypedDict):
    """Input of `evidence.verify`: its path, query and body fields in one dict."""
    #: Id of the evidence addressed.
    id: str
    expected_content_root_sha256: str
    expected_excerpt_sha256: str
    verdict: Literal["verified", "rejected"]


@final
class EvidenceVerifyOutput(TypedDict):
    """Answer of `evidence.verify`."""
    commit: Commit
    verification: Verification


@final
class InstallationsCreateInput(TypedDict):
    """Input of `installations.create`: its path, query and body fields in one dict."""
    name: str


@final
class InstallationsCreateOutput(TypedDict):
    """Answer of `installations.create`."""
    commit: Commit
    installation: InstallationsCreateOutputInstallation


@final
class InstallationsCreateOutputInstallation(TypedDict):
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    created_at: float
    id: str
    name: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    revoked_at: float | None
    workspace_id: str


@final
class InstallationsListInput(TypedDict):
    """Input of `installations.list`: its path, query and body fields in one dict."""
    #: Items per page.
    limit: NotRequired[int]
    #: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
    cursor: NotRequired[str]


@final
class InstallationsListOutput(TypedDict):
    """Answer of `installations.list`."""
    installations: list[InstallationsCreateOutputInstallation]
    next_cursor: str | None


@final
class InstallationsRevokeInput(TypedDict):
    """Input of `installations.revoke`: its path, query and body fields in one dict."""
    #: Id of the product installation addressed.
    id: str


@final
class InstallationsRevokeOutput(TypedDict):
    """Answer of `installations.revoke`."""
    commit: Commit | None
    installation: InstallationsCreateOutputInstallation


@final
class LedgerHeadInput(TypedDict):
    """Input of `ledger.head`: its path, query and body fields in one dict."""


@final
class LedgerHeadOutput(TypedDict):
    """Answer of `ledger.head`."""
    head: LedgerHeadOutputHead
    signature: str


@final
class LedgerHeadOutputHead(TypedDict):
    chain_hash: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    recorded_at: float
    sequence: int
    workspace_id: str


@final
class LedgerProofInput(TypedDict):
    """Input of `ledger.proof`: its path, query and body fields in one dict."""
    #: Id of the revision, evidence or verification addressed.
    id: str
    #: Prove against the head at this sequence (a head kept earlier); default: the latest.
    head_sequence: NotRequired[int]


@final
class LedgerProofOutput(TypedDict):
    """Answer of `ledger.proof`."""
    digest_input: str
    head: LedgerHeadOutput
    links: list[str]
    previous_chain_hash: str
    sequence: int
    subject_id: str


@final
class MeGetInput(TypedDict):
    """Input of `me.get`: its path, query and body fields in one dict."""


@final
class MeGetOutput(TypedDict):
    """Answer of `me.get`."""
    actor: Actor
    caller_kind: Literal["session", "oauth", "installation", "service_key"]
    scopes: list[str]
    workspace_id: str | None


@final
class MemoriesAttestInput(TypedDict):
    """Input of `memories.attest`: its path, query and body fields in one dict."""
    #: Id of the memory addressed.
    id: str
    evidence_ids: list[str]
    expected_generation: int
    verification_ids: list[str]


@final
class MemoriesAttestOutput(TypedDict):
    """Answer of `memories.attest`."""
    commit: Commit
    memory: Memory
    revision: Revision


@final
class MemoriesCorrectInput(TypedDict):
    """Input of `memories.correct`: its path, query and body fields in one dict."""
    #: Id of the memory addressed.
    id: str
    expected_generation: int
    dry_run: NotRequired[bool]
    evidence_ids: NotRequired[list[str]]
    support_revision_ids: NotRequired[list[str]]
    text: NotRequired[str]
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    valid_from: NotRequired[float]
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    valid_to: NotRequired[float | None]


@final
class MemoriesCorrectOutput(TypedDict):
    """Answer of `memories.correct`."""
    commit: Commit | None
    invalidated_revision_ids: list[str]
    memory: Memory
    revision: Revision


@final
class MemoriesCreateInput(TypedDict):
    """Input of `memories.create`: its path, query and body fields in one dict."""
    kind: Literal["claim", "episode", "procedure"]
    namespace_id: str
    text: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    valid_from: float
    evidence_ids: NotRequired[list[str]]
    key: NotRequired[str]
    support_revision_ids: NotRequired[list[str]]
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    valid_to: NotRequired[float | None]


@final
class MemoriesCreateOutput(TypedDict):
    """Answer of `memories.create`."""
    commit: Commit
    memory: Memory
    revision: Revision


@final
class MemoriesForgetInput(TypedDict):
    """Input of `memories.forget`: its path, query and body fields in one dict."""
    #: Id of the memory addressed.
    id: str
    expected_generation: int
    mode: Literal["retract", "purge"]
    dry_run: NotRequired[bool]


@final
class MemoriesForgetOutputWithMemory(TypedDict):
    commit: Commit | None
    memory: Memory
    revision: Revision


@final
class MemoriesForgetOutputWithReceipt(TypedDict):
    commit: Commit | None
    receipt: MemoryDeletionReceipt


MemoriesForgetOutput: TypeAlias = "MemoriesForgetOutputWithMemory | MemoriesForgetOutputWithReceipt"
"""Answer of `memories.forget`."""


@final
class MemoriesGetInput(TypedDict):
    """Input of `memories.get`: its path, query and body fields in one dict."""
    #: Id of the memory addressed.
    id: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    as_of: NotRequired[float]
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    known_at: NotRequired[float]
    #: Whether the view carries the evidence behind the revision.
    include_evidence: NotRequired[bool]


@final
class MemoriesGetOutput(TypedDict):
    """Answer of `memories.get`."""
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    as_of: float
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    known_at: float
    view: MemoryView


@final
class MemoriesHistoryInput(TypedDict):
    """Input of `memories.history`: its path, query and body fields in one dict."""
    #: Id of the memory addressed.
    id: str
    #: Items per page.
    limit: NotRequired[int]
    #: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
    cursor: NotRequired[str]
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    known_at: NotRequired[float]


@final
class MemoriesHistoryOutput(TypedDict):
    """Answer of `memories.history`."""
    next_cursor: str | None
    revisions: list[Revision]


@final
class MemoriesListInput(TypedDict):
    """Input of `memories.list`: its path, query and body fields in one dict."""
    #: Only items in this namespace.
    namespace_id: str
    #: Only memories of this kind.
    kind: NotRequired[Literal["claim", "episode", "procedure"]]
    #: Only the memories holding this key (compared exactly) as seen at `as_of` and `known_at`: at most one.
    key: NotRequired[str]
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    as_of: NotRequired[float]
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    known_at: NotRequired[float]
    #: Items per page.
    limit: NotRequired[int]
    #: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
    cursor: NotRequired[str]


@final
class MemoriesListOutput(TypedDict):
    """Answer of `memories.list`."""
    items: list[MemoryListItem]
    next_cursor: str | None


@final
class NamespacesCreateInput(TypedDict):
    """Input of `namespaces.create`: its path, query and body fields in one dict."""
    name: str
    parent_id: str | None


@final
class NamespacesCreateOutput(TypedDict):
    """Answer of `namespaces.create`."""
    commit: Commit
    namespace: Namespace


@final
class NamespacesGetInput(TypedDict):
    """Input of `namespaces.get`: its path, query and body fields in one dict."""
    #: Id of the namespace addressed.
    id: str


@final
class NamespacesGetOutput(TypedDict):
    """Answer of `namespaces.get`."""
    namespace: Namespace


@final
class NamespacesGrantsListInput(TypedDict):
    """Input of `namespaces.grants.list`: its path, query and body fields in one dict."""
    #: Id of the namespace addressed.
    id: str


@final
class NamespacesGrantsListOutput(TypedDict):
    """Answer of `namespaces.grants.list`."""
    grants: list[Grant]
    namespace_id: str


@final
class NamespacesGrantsPutInput(TypedDict):
    """Input of `namespaces.grants.put`: its path, query and body fields in one dict."""
    #: Id of the namespace addressed.
    id: str
    grants: list[NamespacesGrantsPutInputGrant]


@final
class NamespacesGrantsPutInputGrant(TypedDict):
    capabilities: list[Literal["read", "observe", "verify", "correct", "forget", "admin"]]
    inherit: bool
    target: GrantTarget


@final
class NamespacesGrantsPutOutput(TypedDict):
    """Answer of `namespaces.grants.put`."""
    commit: Commit
    grants: list[Grant]
    namespace_id: str


@final
class NamespacesListInput(TypedDict):
    """Input of `namespaces.list`: its path, query and body fields in one dict."""
    #: Items per page.
    limit: NotRequired[int]
    #: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
    cursor: NotRequired[str]
    #: List the readable children of this namespace instead of the whole workspace.
    parent_id: NotRequired[str]


@final
class NamespacesListOutput(TypedDict):
    """Answer of `namespaces.list`."""
    namespaces: list[Namespace]
    next_cursor: str | None


@final
class NamespacesUpdateInput(TypedDict):
    """Input of `namespaces.update`: its path, query and body fields in one dict."""
    #: Id of the namespace addressed.
    id: str
    name: str


@final
class NamespacesUpdateOutput(TypedDict):
    """Answer of `namespaces.update`."""
    commit: Commit
    namespace: Namespace


@final
class RecallInput(TypedDict):
    """Input of `recall`: its path, query and body fields in one dict."""
    namespace_ids: list[str]
    query: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    as_of: NotRequired[float]
    budget: NotRequired[RecallInputBudget]
    include_descendants: NotRequired[bool]
    kinds: NotRequired[list[Literal["claim", "episode", "procedure"]]]
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    known_at: NotRequired[float]
    min_sequence: NotRequired[int]
    mode: NotRequired[Literal["hybrid", "lexical", "semantic"]]
    on_pending: NotRequired[Literal["report", "error"]]
    wait_ms: NotRequired[int]


@final
class RecallInputBudget(TypedDict):
    max_context_chars: NotRequired[int]
    max_items: NotRequired[int]


@final
class RecallOutput(TypedDict):
    """Answer of `recall`."""
    context_chars: int
    indexed_sequence: int
    items: list[RecallOutputItem]
    retrieval: RecallOutputRetrieval
    status: Literal["complete", "partial", "degraded", "pending"]


@final
class RecallOutputItem(TypedDict):
    memory: Memory
    ranks: RecallOutputItemRanks
    revision: Revision
    score: float
    stale: bool


@final
class RecallOutputItemRanks(TypedDict):
    lexical: int | None
    semantic: int | None


@final
class RecallOutputRetrieval(TypedDict):
    lexical: Literal["ok", "off", "unavailable"]
    mode: Literal["hybrid", "lexical", "semantic"]
    semantic: Literal["ok", "off", "unavailable"]


@final
class WebhooksCreateInput(TypedDict):
    """Input of `webhooks.create`: its path, query and body fields in one dict."""
    url: str
    description: NotRequired[str]
    namespace_id: NotRequired[str]


@final
class WebhooksCreateOutput(TypedDict):
    """Answer of `webhooks.create`."""
    commit: Commit
    secret: str | None
    webhook: WebhooksCreateOutputWebhook


@final
class WebhooksCreateOutputWebhook(TypedDict):
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    created_at: float
    delivered_sequence: int
    description: str | None
    disabled_reason: str | None
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    failing_since: float | None
    id: str
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    last_delivered_at: float | None
    last_error: str | None
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    last_error_at: float | None
    namespace_id: str | None
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    next_attempt_at: float | None
    state: Literal["active", "disabled", "deleted"]
    #: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999
    state_since: float | None
    url: str
    workspace_id: str


@final
class WebhooksDeleteInput(TypedDict):
    """Input of `webhooks.delete`: its path, query and body fields in one dict."""
    #: Id of the webhook addressed.
    id: str


@final
class WebhooksDeleteOutput(TypedDict):
    """Answer of `webhooks.delete`."""
    commit: Commit | None
    webhook: WebhooksCreateOutputWebhook


@final
class WebhooksListInput(TypedDict):
    """Input of `webhooks.list`: its path, query and body fields in one dict."""
    #: Items per page.
    limit: NotRequired[int]
    #: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
    cursor: NotRequired[str]


@final
class WebhooksListOutput(TypedDict):
    """Answer of `webhooks.list`."""
    next_cursor: str | None
    webhooks: list[WebhooksCreateOutputWebhook]


@final
class WorkspacesCreateInput(TypedDict):
    """Input of `workspaces.create`: its path, query and body fields in one dict."""
    name: str


@final
class WorkspacesCreateOutput(TypedDict):
    """Answer of `workspaces.create`."""
    workspace: Workspace


@final
class WorkspacesListInput(TypedDict):
    """Input of `workspaces.list`: its path, query and body fields in one dict."""
    #: Items per page.
    limit: NotRequired[int]
    #: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
    cursor: NotRequired[str]


@final
class WorkspacesListOutput(TypedDict):
    """Answer of `workspaces.list`."""
    enrollment: WorkspacesListOutputEnrollment
    next_cursor: str | None
    workspaces: list[Workspace]


@final
class WorkspacesListOutputEnrollment(TypedDict):
    can_create_workspace: bool
    policy: Literal["admin_managed_pilot"]


@final
class WorkspacesMembersPutInput(TypedDict):
    """Input of `workspaces.members.put`: its path, query and body fields in one dict."""
    #: Id of the workspace addressed.
    id: str
    members: list[Member]


@final
class WorkspacesMembersPutOutput(TypedDict):
    """Answer of `workspaces.members.put`."""
    commit: Commit
    members: list[Member]
    workspace_id: str


OperationName: TypeAlias = Literal["changes.list", "credentials.create", "credentials.list", "credentials.revoke", "evidence.create", "evidence.forget", "evidence.get", "evidence.verify", "installations.create", "installations.list", "installations.revoke", "ledger.head", "ledger.proof", "me.get", "memories.attest", "memories.correct", "memories.create", "memories.forget", "memories.get", "memories.history", "memories.list", "namespaces.create", "namespaces.get", "namespaces.grants.list", "namespaces.grants.put", "namespaces.list", "namespaces.update", "recall", "webhooks.create", "webhooks.delete", "webhooks.list", "workspaces.create", "workspaces.list", "workspaces.members.put"]

PagedOperationName: TypeAlias = Literal["changes.list", "credentials.list", "evidence.get", "installations.list", "memories.history", "memories.list", "namespaces.list", "webhooks.list", "workspaces.list"]

OPERATIONS: Final[Mapping[OperationName, OperationSpec]] = {
    "changes.list": OperationSpec(
        method="GET",
        path="/v1/changes",
        path_params=(),
        query=("after", "limit", "namespace_id", "include_descendants", "wait_ms"),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=Pager(param="after", next="next_after", items="changes"),
    ),
    "credentials.create": OperationSpec(
        method="POST",
        path="/v1/credentials",
        path_params=(),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "credentials.list": OperationSpec(
        method="GET",
        path="/v1/credentials",
        path_params=(),
        query=("limit", "cursor", "product_installation_id"),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=Pager(param="cursor", next="next_cursor", items="credentials"),
    ),
    "credentials.revoke": OperationSpec(
        method="POST",
        path="/v1/credentials/{id}/revoke",
        path_params=("id",),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "evidence.create": OperationSpec(
        method="POST",
        path="/v1/evidence",
        path_params=(),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "evidence.forget": OperationSpec(
        method="POST",
        path="/v1/evidence/{id}/forget",
        path_params=("id",),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "evidence.get": OperationSpec(
        method="GET",
        path="/v1/evidence/{id}",
        path_params=("id",),
        query=("cursor",),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=Pager(param="cursor", next="next_cursor", items="verifications"),
    ),
    "evidence.verify": OperationSpec(
        method="POST",
        path="/v1/evidence/{id}/verifications",
        path_params=("id",),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "installations.create": OperationSpec(
        method="POST",
        path="/v1/installations",
        path_params=(),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "installations.list": OperationSpec(
        method="GET",
        path="/v1/installations",
        path_params=(),
        query=("limit", "cursor"),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=Pager(param="cursor", next="next_cursor", items="installations"),
    ),
    "installations.revoke": OperationSpec(
        method="POST",
        path="/v1/installations/{id}/revoke",
        path_params=("id",),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "ledger.head": OperationSpec(
        method="GET",
        path="/v1/ledger/head",
        path_params=(),
        query=(),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=None,
    ),
    "ledger.proof": OperationSpec(
        method="GET",
        path="/v1/ledger/proofs/{id}",
        path_params=("id",),
        query=("head_sequence",),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=None,
    ),
    "me.get": OperationSpec(
        method="GET",
        path="/v1/me",
        path_params=(),
        query=(),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=False,
        pager=None,
    ),
    "memories.attest": OperationSpec(
        method="POST",
        path="/v1/memories/{id}/attestations",
        path_params=("id",),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "memories.correct": OperationSpec(
        method="POST",
        path="/v1/memories/{id}/corrections",
        path_params=("id",),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "memories.create": OperationSpec(
        method="POST",
        path="/v1/memories",
        path_params=(),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "memories.forget": OperationSpec(
        method="POST",
        path="/v1/memories/{id}/forget",
        path_params=("id",),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "memories.get": OperationSpec(
        method="GET",
        path="/v1/memories/{id}",
        path_params=("id",),
        query=("as_of", "known_at", "include_evidence"),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=None,
    ),
    "memories.history": OperationSpec(
        method="GET",
        path="/v1/memories/{id}/history",
        path_params=("id",),
        query=("limit", "cursor", "known_at"),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=Pager(param="cursor", next="next_cursor", items="revisions"),
    ),
    "memories.list": OperationSpec(
        method="GET",
        path="/v1/memories",
        path_params=(),
        query=("namespace_id", "kind", "key", "as_of", "known_at", "limit", "cursor"),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=Pager(param="cursor", next="next_cursor", items="items"),
    ),
    "namespaces.create": OperationSpec(
        method="POST",
        path="/v1/namespaces",
        path_params=(),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "namespaces.get": OperationSpec(
        method="GET",
        path="/v1/namespaces/{id}",
        path_params=("id",),
        query=(),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=None,
    ),
    "namespaces.grants.list": OperationSpec(
        method="GET",
        path="/v1/namespaces/{id}/grants",
        path_params=("id",),
        query=(),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=None,
    ),
    "namespaces.grants.put": OperationSpec(
        method="PUT",
        path="/v1/namespaces/{id}/grants",
        path_params=("id",),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "namespaces.list": OperationSpec(
        method="GET",
        path="/v1/namespaces",
        path_params=(),
        query=("limit", "cursor", "parent_id"),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=Pager(param="cursor", next="next_cursor", items="namespaces"),
    ),
    "namespaces.update": OperationSpec(
        method="PATCH",
        path="/v1/namespaces/{id}",
        path_params=("id",),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "recall": OperationSpec(
        method="POST",
        path="/v1/recall",
        path_params=(),
        query=(),
        body=True,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=None,
    ),
    "webhooks.create": OperationSpec(
        method="POST",
        path="/v1/webhooks",
        path_params=(),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "webhooks.delete": OperationSpec(
        method="DELETE",
        path="/v1/webhooks/{id}",
        path_params=("id",),
        query=(),
        body=False,
        idempotent=True,
        mutates=True,
        workspace=True,
        pager=None,
    ),
    "webhooks.list": OperationSpec(
        method="GET",
        path="/v1/webhooks",
        path_params=(),
        query=("limit", "cursor"),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=True,
        pager=Pager(param="cursor", next="next_cursor", items="webhooks"),
    ),
    "workspaces.create": OperationSpec(
        method="POST",
        path="/v1/workspaces",
        path_params=(),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=False,
        pager=None,
    ),
    "workspaces.list": OperationSpec(
        method="GET",
        path="/v1/workspaces",
        path_params=(),
        query=("limit", "cursor"),
        body=False,
        idempotent=False,
        mutates=False,
        workspace=False,
        pager=Pager(param="cursor", next="next_cursor", items="workspaces"),
    ),
    "workspaces.members.put": OperationSpec(
        method="PUT",
        path="/v1/workspaces/{id}/members",
        path_params=("id",),
        query=(),
        body=True,
        idempotent=True,
        mutates=True,
        workspace=False,
        pager=None,
    ),
}
"""How to call each operation: the runtime dispatches on this table alone."""


class ChangesOperations:
    """The `changes.*` operations."""

    def __init__(self, root: Operations) -> None:
        self._root = root

    def list(
        self,
        *,
        after: int | NotGiven = NOT_GIVEN,
        limit: int | NotGiven = NOT_GIVEN,
        namespace_id: str | NotGiven = NOT_GIVEN,
        include_descendants: bool | NotGiven = NOT_GIVEN,
        wait_ms: int | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> ChangesListOutput:
        """GET /v1/changes: List the commits after a sequence with the ids they wrote, as far as the caller may read them; optionally wait for the next one.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        At most 100 items per answer.

        Args:
            after: List the changes after this sequence: the `next_after` of the previous page, 0 to start. Default: `0`.
            limit: Items per page. Default: `50`.
            namespace_id: Only items in this namespace.
            include_descendants: With `namespace_id`: also the namespaces below it. Default: `true`.
            wait_ms: When no change follows `after` yet, wait up to this long for the next commit. Default: `0`.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            ChangesListOutput,
            self._root._call(
                "changes.list",
                given(
                    after=after,
                    limit=limit,
                    namespace_id=namespace_id,
                    include_descendants=include_descendants,
                    wait_ms=wait_ms,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )


class CredentialsOperations:
    """The `credentials.*` operations."""

    def __init__(self, root: Operations) -> None:
        self._root = root

    def create(
        self,
        *,
        capabilities: Sequence[Literal["read", "observe", "verify", "correct", "forget", "admin"]],
        kind: Literal["installation", "service_key"],
        name: str,
        expires_at: float | None | NotGiven = NOT_GIVEN,
        namespace_ids: Sequence[str] | None | NotGiven = NOT_GIVEN,
        product_installation_id: str | NotGiven = NOT_GIVEN,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> CredentialsCreateOutput:
        """POST /v1/credentials: Issue an installation credential or a service key; the answer shows its secret this once (workspace admins only).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.
        The `secret` is shown in this answer only; a replay carries `secret: null`.

        Args:
            expires_at: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999. Default: `null`.
            namespace_ids: Default: `null`.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            CredentialsCreateOutput,
            self._root._call(
                "credentials.create",
                given(
                    capabilities=capabilities,
                    kind=kind,
                    name=name,
                    expires_at=expires_at,
                    namespace_ids=namespace_ids,
                    product_installation_id=product_installation_id,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    def list(
        self,
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        product_installation_id: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> CredentialsListOutput:
        """GET /v1/credentials: List installation credentials and service keys of the workspace (never their secrets).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        At most 100 items per answer.

        Args:
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            product_installation_id: Only the credentials of this product installation.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            CredentialsListOutput,
            self._root._call(
                "credentials.list",
                given(
                    limit=limit,
                    cursor=cursor,
                    product_installation_id=product_installation_id,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    def revoke(
        self,
        *,
        id: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> CredentialsRevokeOutput:
        """POST /v1/credentials/{id}/revoke: Revoke an installation credential or a service key, effective on the next request.

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the service key addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            CredentialsRevokeOutput,
            self._root._call(
                "credentials.revoke",
                given(
                    id=id,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )


class EvidenceOperations:
    """The `evidence.*` operations."""

    def __init__(self, root: Operations) -> None:
        self._root = root

    def create(
        self,
        *,
        content_root_sha256: str,
        excerpt: str,
        namespace_id: str,
        source_locator: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> EvidenceCreateOutput:
        """POST /v1/evidence: Record an exact source excerpt; deduplicated per namespace by its SHA-256.

        OAuth scope `svc:observe` (sessions are not scope-limited).
        Needs the `observe` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            EvidenceCreateOutput,
            self._root._call(
                "evidence.create",
                given(
                    content_root_sha256=content_root_sha256,
                    excerpt=excerpt,
                    namespace_id=namespace_id,
                    source_locator=source_locator,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    def forget(
        self,
        *,
        id: str,
        dry_run: bool | NotGiven = NOT_GIVEN,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> EvidenceForgetOutput:
        """POST /v1/evidence/{id}/forget: Purge an evidence excerpt from the ledger, answering a deletion receipt.

        OAuth scope `svc:forget` (sessions are not scope-limited).
        Needs the `forget` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the evidence addressed.
            dry_run: Default: `false`.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            EvidenceForgetOutput,
            self._root._call(
                "evidence.forget",
                given(
                    id=id,
                    dry_run=dry_run,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    def get(
        self,
        *,
        id: str,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> EvidenceGetOutput:
        """GET /v1/evidence/{id}: Read evidence with a page of its verifications (oldest first, 32 a page).

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).

        Args:
            id: Id of the evidence addressed.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            EvidenceGetOutput,
            self._root._call(
                "evidence.get",
                given(
                    id=id,
                    cursor=cursor,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    def verify(
        self,
        *,
        id: str,
        expected_content_root_sha256: str,
        expected_excerpt_sha256: str,
        verdict: Literal["verified", "rejected"],
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> EvidenceVerifyOutput:
        """POST /v1/evidence/{id}/verifications: Record a verdict on evidence after comparing both expected hashes with the ledger.

        OAuth scope `svc:verify` (sessions are not scope-limited).
        Needs the `verify` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the evidence addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            EvidenceVerifyOutput,
            self._root._call(
                "evidence.verify",
                given(
                    id=id,
                    expected_content_root_sha256=expected_content_root_sha256,
                    expected_excerpt_sha256=expected_excerpt_sha256,
                    verdict=verdict,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )


class InstallationsOperations:
    """The `installations.*` operations."""

    def __init__(self, root: Operations) -> None:
        self._root = root

    def create(
        self,
        *,
        name: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> InstallationsCreateOutput:
        """POST /v1/installations: Install a product into the workspace; grants may then target it (workspace admins only).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            InstallationsCreateOutput,
            self._root._call(
                "installations.create",
                given(
                    name=name,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    def list(
        self,
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> InstallationsListOutput:
        """GET /v1/installations: List the product installations of the workspace, oldest first (workspace admins only).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        At most 100 items per answer.

        Args:
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            InstallationsListOutput,
            self._root._call(
                "installations.list",
                given(
                    limit=limit,
                    cursor=cursor,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    def revoke(
        self,
        *,
        id: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> InstallationsRevokeOutput:
        """POST /v1/installations/{id}/revoke: Revoke an installation and every credential issued for it, effective on the next request.

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the product installation addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            InstallationsRevokeOutput,
            self._root._call(
                "installations.revoke",
                given(
                    id=id,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )


class LedgerOperations:
    """The `ledger.*` operations."""

    def __init__(self, root: Operations) -> None:
        self._root = root

    def head(
        self,
        *,
        request_id: str | None = None,
    ) -> LedgerHeadOutput:
        """GET /v1/ledger/head: The workspace's latest sequence and chain hash, signed by the service's ledger key, for a reader to keep.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).

        Args:
            request_id: Sent as X-Request-Id.
        """
        return cast(
            LedgerHeadOutput,
            self._root._call(
                "ledger.head",
                given(),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    def proof(
        self,
        *,
        id: str,
        head_sequence: int | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> LedgerProofOutput:
        """GET /v1/ledger/proofs/{id}: Prove a revision, evidence or verification: the commit that wrote it, its digest input (hashes only) and the chain from there to a signed head.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).

        Args:
            id: Id of the revision, evidence or verification addressed.
            head_sequence: Prove against the head at this sequence (a head kept earlier); default: the latest.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            LedgerProofOutput,
            self._root._call(
                "ledger.proof",
                given(
                    id=id,
                    head_sequence=head_sequence,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )


class MeOperations:
    """The `me.*` operations."""

    def __init__(self, root: Operations) -> None:
        self._root = root

    def get(
        self,
        *,
        request_id: str | None = None,
    ) -> MeGetOutput:
        """GET /v1/me: Who the server resolved the caller to: actor, caller kind, workspace and scopes.

        No OAuth scope is needed.
        Needs no workspace.

        Args:
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MeGetOutput,
            self._root._call(
                "me.get",
                given(),
                idempotency_key=None,
                request_id=request_id,
            ),
        )


class MemoriesOperations:
    """The `memories.*` operations."""

    def __init__(self, root: Operations) -> None:
        self._root = root

    def attest(
        self,
        *,
        id: str,
        evidence_ids: Sequence[str],
        expected_generation: int,
        verification_ids: Sequence[str],
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> MemoriesAttestOutput:
        """POST /v1/memories/{id}/attestations: Promote the current revision to asserted, citing verified evidence, as a new revision.

        OAuth scope `svc:verify` (sessions are not scope-limited).
        Needs the `verify` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the memory addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesAttestOutput,
            self._root._call(
                "memories.attest",
                given(
                    id=id,
                    evidence_ids=evidence_ids,
                    expected_generation=expected_generation,
                    verification_ids=verification_ids,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    def correct(
        self,
        *,
        id: str,
        expected_generation: int,
        dry_run: bool | NotGiven = NOT_GIVEN,
        evidence_ids: Sequence[str] | NotGiven = NOT_GIVEN,
        support_revision_ids: Sequence[str] | NotGiven = NOT_GIVEN,
        text: str | NotGiven = NOT_GIVEN,
        valid_from: float | NotGiven = NOT_GIVEN,
        valid_to: float | None | NotGiven = NOT_GIVEN,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> MemoriesCorrectOutput:
        """POST /v1/memories/{id}/corrections: Supersede the current revision with a corrected one; dependents are invalidated.

        OAuth scope `svc:correct` (sessions are not scope-limited).
        Needs the `correct` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the memory addressed.
            dry_run: Default: `false`.
            valid_from: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            valid_to: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesCorrectOutput,
            self._root._call(
                "memories.correct",
                given(
                    id=id,
                    expected_generation=expected_generation,
                    dry_run=dry_run,
                    evidence_ids=evidence_ids,
                    support_revision_ids=support_revision_ids,
                    text=text,
                    valid_from=valid_from,
                    valid_to=valid_to,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    def create(
        self,
        *,
        kind: Literal["claim", "episode", "procedure"],
        namespace_id: str,
        text: str,
        valid_from: float,
        evidence_ids: Sequence[str] | NotGiven = NOT_GIVEN,
        key: str | NotGiven = NOT_GIVEN,
        support_revision_ids: Sequence[str] | NotGiven = NOT_GIVEN,
        valid_to: float | None | NotGiven = NOT_GIVEN,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> MemoriesCreateOutput:
        """POST /v1/memories: Create a memory with its first revision (asserted when verified evidence backs it).

        OAuth scope `svc:observe` (sessions are not scope-limited).
        Needs the `observe` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            valid_from: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            evidence_ids: Default: `[]`.
            support_revision_ids: Default: `[]`.
            valid_to: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999. Default: `null`.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesCreateOutput,
            self._root._call(
                "memories.create",
                given(
                    kind=kind,
                    namespace_id=namespace_id,
                    text=text,
                    valid_from=valid_from,
                    evidence_ids=evidence_ids,
                    key=key,
                    support_revision_ids=support_revision_ids,
                    valid_to=valid_to,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    def forget(
        self,
        *,
        id: str,
        expected_generation: int,
        mode: Literal["retract", "purge"],
        dry_run: bool | NotGiven = NOT_GIVEN,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> MemoriesForgetOutput:
        """POST /v1/memories/{id}/forget: Retract a memory (known until now) or purge it (erased at every known_at, with a receipt).

        OAuth scope `svc:forget` (sessions are not scope-limited).
        Needs the `forget` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the memory addressed.
            dry_run: Default: `false`.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesForgetOutput,
            self._root._call(
                "memories.forget",
                given(
                    id=id,
                    expected_generation=expected_generation,
                    mode=mode,
                    dry_run=dry_run,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    def get(
        self,
        *,
        id: str,
        as_of: float | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        include_evidence: bool | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> MemoriesGetOutput:
        """GET /v1/memories/{id}: Read a memory as it held at as_of and as the service knew it at known_at.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).

        Args:
            id: Id of the memory addressed.
            as_of: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            known_at: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            include_evidence: Whether the view carries the evidence behind the revision. Default: `false`.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesGetOutput,
            self._root._call(
                "memories.get",
                given(
                    id=id,
                    as_of=as_of,
                    known_at=known_at,
                    include_evidence=include_evidence,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    def history(
        self,
        *,
        id: str,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> MemoriesHistoryOutput:
        """GET /v1/memories/{id}/history: List the revisions of a memory, newest generation first, as known at known_at.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        At most 100 items per answer.

        Args:
            id: Id of the memory addressed.
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            known_at: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesHistoryOutput,
            self._root._call(
                "memories.history",
                given(
                    id=id,
                    limit=limit,
                    cursor=cursor,
                    known_at=known_at,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    def list(
        self,
        *,
        namespace_id: str,
        kind: Literal["claim", "episode", "procedure"] | NotGiven = NOT_GIVEN,
        key: str | NotGiven = NOT_GIVEN,
        as_of: float | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> MemoriesListOutput:
        """GET /v1/memories: List the memories of a namespace current at known_at and valid at as_of (optionally the one holding a key).

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        At most 100 items per answer.

        Args:
            namespace_id: Only items in this namespace.
            kind: Only memories of this kind.
            key: Only the memories holding this key (compared exactly) as seen at `as_of` and `known_at`: at most one.
            as_of: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            known_at: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesListOutput,
            self._root._call(
                "memories.list",
                given(
                    namespace_id=namespace_id,
                    kind=kind,
                    key=key,
                    as_of=as_of,
                    known_at=known_at,
                    limit=limit,
                    cursor=cursor,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )


class NamespacesGrantsOperations:
    """The `namespaces.grants.*` operations."""

    def __init__(self, root: Operations) -> None:
        self._root = root

    def list(
        self,
        *,
        id: str,
        request_id: str | None = None,
    ) -> NamespacesGrantsListOutput:
        """GET /v1/namespaces/{id}/grants: Read the grants on a namespace, in their stored order (admins of the namespace only).

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `admin` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        At most 100 items per answer.

        Args:
            id: Id of the namespace addressed.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            NamespacesGrantsListOutput,
            self._root._call(
                "namespaces.grants.list",
                given(
                    id=id,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    def put(
        self,
        *,
        id: str,
        grants: Sequence[NamespacesGrantsPutInputGrant],
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> NamespacesGrantsPutOutput:
        """PUT /v1/namespaces/{id}/grants: Replace the grants on a namespace; omitted grants are revoked at once.

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Needs the `admin` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.
        At most 100 items per answer.

        Args:
            id: Id of the namespace addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            NamespacesGrantsPutOutput,
            self._root._call(
                "namespaces.grants.put",
                given(
                    id=id,
                    grants=grants,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )


class NamespacesOperations:
    """The `namespaces.*` operations."""

    grants: NamespacesGrantsOperations

    def __init__(self, root: Operations) -> None:
        self._root = root
        self.grants = NamespacesGrantsOperations(root)

    def create(
        self,
        *,
        name: str,
        parent_id: str | None,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> NamespacesCreateOutput:
        """POST /v1/namespaces: Create a namespace at the root (workspace admins) or under a parent (admin on the parent).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Needs the `admin` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            NamespacesCreateOutput,
            self._root._call(
                "namespaces.create",
                given(
                    name=name,
                    parent_id=parent_id,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    def get(
        self,
        *,
        id: str,
        request_id: str | None = None,
    ) -> NamespacesGetOutput:
        """GET /v1/namespaces/{id}: Read one namespace.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).

        Args:
            id: Id of the namespace addressed.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            NamespacesGetOutput,
            self._root._call(
                "namespaces.get",
                given(
                    id=id,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    def list(
        self,
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        parent_id: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> NamespacesListOutput:
        """GET /v1/namespaces: List readable namespaces by display path, or the readable children of parent_id.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        At most 100 items per answer.

        Args:
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            parent_id: List the readable children of this namespace instead of the whole workspace.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            NamespacesListOutput,
            self._root._call(
                "namespaces.list",
                given(
                    limit=limit,
                    cursor=cursor,
                    parent_id=parent_id,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    def update(
        self,
        *,
        id: str,
        name: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> NamespacesUpdateOutput:
        """PATCH /v1/namespaces/{id}: Rename a namespace.

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Needs the `admin` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the namespace addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            NamespacesUpdateOutput,
            self._root._call(
                "namespaces.update",
                given(
                    id=id,
                    name=name,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )


class WebhooksOperations:
    """The `webhooks.*` operations."""

    def __init__(self, root: Operations) -> None:
        self._root = root

    def create(
        self,
        *,
        url: str,
        description: str | NotGiven = NOT_GIVEN,
        namespace_id: str | NotGiven = NOT_GIVEN,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> WebhooksCreateOutput:
        """POST /v1/webhooks: Register an endpoint for signed deliveries of the workspace changes; the answer shows its signing secret this once (workspace admins only).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.
        The `secret` is shown in this answer only; a replay carries `secret: null`.

        Args:
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            WebhooksCreateOutput,
            self._root._call(
                "webhooks.create",
                given(
                    url=url,
                    description=description,
                    namespace_id=namespace_id,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    def delete(
        self,
        *,
        id: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> WebhooksDeleteOutput:
        """DELETE /v1/webhooks/{id}: Delete a webhook: no delivery starts after this answer. Deleting it again answers `commit: null`.

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the webhook addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            WebhooksDeleteOutput,
            self._root._call(
                "webhooks.delete",
                given(
                    id=id,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    def list(
        self,
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> WebhooksListOutput:
        """GET /v1/webhooks: List the webhooks of the workspace with their delivery state, oldest first (workspace admins only).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        At most 100 items per answer.

        Args:
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            WebhooksListOutput,
            self._root._call(
                "webhooks.list",
                given(
                    limit=limit,
                    cursor=cursor,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )


class WorkspacesMembersOperations:
    """The `workspaces.members.*` operations."""

    def __init__(self, root: Operations) -> None:
        self._root = root

    def put(
        self,
        *,
        id: str,
        members: Sequence[Member],
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> WorkspacesMembersPutOutput:
        """PUT /v1/workspaces/{id}/members: Replace the member list of a workspace (workspace admins only).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by the path.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.
        At most 100 items per answer.

        Args:
            id: Id of the workspace addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            WorkspacesMembersPutOutput,
            self._root._call(
                "workspaces.members.put",
                given(
                    id=id,
                    members=members,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )


class WorkspacesOperations:
    """The `workspaces.*` operations."""

    members: WorkspacesMembersOperations

    def __init__(self, root: Operations) -> None:
        self._root = root
        self.members = WorkspacesMembersOperations(root)

    def create(
        self,
        *,
        name: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> WorkspacesCreateOutput:
        """POST /v1/workspaces: Create a workspace; the enrolled human caller becomes its first admin.

        No OAuth scope is needed.
        Needs no workspace.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            WorkspacesCreateOutput,
            self._root._call(
                "workspaces.create",
                given(
                    name=name,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    def list(
        self,
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> WorkspacesListOutput:
        """GET /v1/workspaces: List the workspaces the caller belongs to, and whether it may create one.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs no workspace.
        At most 100 items per answer.

        Args:
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            WorkspacesListOutput,
            self._root._call(
                "workspaces.list",
                given(
                    limit=limit,
                    cursor=cursor,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )


class Operations:
    """One method per operation of the API, nested by the dots of its name (the synchronous flavour)."""

    changes: ChangesOperations
    credentials: CredentialsOperations
    evidence: EvidenceOperations
    installations: InstallationsOperations
    ledger: LedgerOperations
    me: MeOperations
    memories: MemoriesOperations
    namespaces: NamespacesOperations
    webhooks: WebhooksOperations
    workspaces: WorkspacesOperations

    def __init__(self) -> None:
        self.changes = ChangesOperations(self)
        self.credentials = CredentialsOperations(self)
        self.evidence = EvidenceOperations(self)
        self.installations = InstallationsOperations(self)
        self.ledger = LedgerOperations(self)
        self.me = MeOperations(self)
        self.memories = MemoriesOperations(self)
        self.namespaces = NamespacesOperations(self)
        self.webhooks = WebhooksOperations(self)
        self.workspaces = WorkspacesOperations(self)

    def _call(
        self,
        operation: OperationName,
        fields: Mapping[str, object],
        *,
        idempotency_key: str | None,
        request_id: str | None,
    ) -> Any:
        raise NotImplementedError

    def _paginate(
        self, operation: PagedOperationName, fields: Mapping[str, object], *, request_id: str | None
    ) -> Iterator[Any]:
        raise NotImplementedError

    def _recall_when_indexed(
        self, fields: Mapping[str, object], *, after: SequenceRef, timeout: float, request_id: str | None
    ) -> Any:
        raise NotImplementedError

    def recall(
        self,
        *,
        namespace_ids: Sequence[str],
        query: str,
        as_of: float | NotGiven = NOT_GIVEN,
        budget: RecallInputBudget | NotGiven = NOT_GIVEN,
        include_descendants: bool | NotGiven = NOT_GIVEN,
        kinds: Sequence[Literal["claim", "episode", "procedure"]] | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        min_sequence: int | NotGiven = NOT_GIVEN,
        mode: Literal["hybrid", "lexical", "semantic"] | NotGiven = NOT_GIVEN,
        on_pending: Literal["report", "error"] | NotGiven = NOT_GIVEN,
        wait_ms: int | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> RecallOutput:
        """POST /v1/recall: Retrieve memories relevant to a query, with an honest status of how complete the answer is.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        At most 100 items per answer.

        Args:
            as_of: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            budget: Default: `{}`.
            include_descendants: Default: `true`.
            known_at: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            mode: Default: `"hybrid"`.
            on_pending: Default: `"report"`.
            wait_ms: Default: `0`.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            RecallOutput,
            self._call(
                "recall",
                given(
                    namespace_ids=namespace_ids,
                    query=query,
                    as_of=as_of,
                    budget=budget,
                    include_descendants=include_descendants,
                    kinds=kinds,
                    known_at=known_at,
                    min_sequence=min_sequence,
                    mode=mode,
                    on_pending=on_pending,
                    wait_ms=wait_ms,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    @overload
    def call(
        self, operation: Literal["changes.list"], fields: ChangesListInput | None = None, *, request_id: str | None = None
    ) -> ChangesListOutput: ...

    @overload
    def call(
        self, operation: Literal["credentials.create"], fields: CredentialsCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> CredentialsCreateOutput: ...

    @overload
    def call(
        self, operation: Literal["credentials.list"], fields: CredentialsListInput | None = None, *, request_id: str | None = None
    ) -> CredentialsListOutput: ...

    @overload
    def call(
        self, operation: Literal["credentials.revoke"], fields: CredentialsRevokeInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> CredentialsRevokeOutput: ...

    @overload
    def call(
        self, operation: Literal["evidence.create"], fields: EvidenceCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> EvidenceCreateOutput: ...

    @overload
    def call(
        self, operation: Literal["evidence.forget"], fields: EvidenceForgetInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> EvidenceForgetOutput: ...

    @overload
    def call(
        self, operation: Literal["evidence.get"], fields: EvidenceGetInput, *, request_id: str | None = None
    ) -> EvidenceGetOutput: ...

    @overload
    def call(
        self, operation: Literal["evidence.verify"], fields: EvidenceVerifyInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> EvidenceVerifyOutput: ...

    @overload
    def call(
        self, operation: Literal["installations.create"], fields: InstallationsCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> InstallationsCreateOutput: ...

    @overload
    def call(
        self, operation: Literal["installations.list"], fields: InstallationsListInput | None = None, *, request_id: str | None = None
    ) -> InstallationsListOutput: ...

    @overload
    def call(
        self, operation: Literal["installations.revoke"], fields: InstallationsRevokeInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> InstallationsRevokeOutput: ...

    @overload
    def call(
        self, operation: Literal["ledger.head"], fields: LedgerHeadInput | None = None, *, request_id: str | None = None
    ) -> LedgerHeadOutput: ...

    @overload
    def call(
        self, operation: Literal["ledger.proof"], fields: LedgerProofInput, *, request_id: str | None = None
    ) -> LedgerProofOutput: ...

    @overload
    def call(
        self, operation: Literal["me.get"], fields: MeGetInput | None = None, *, request_id: str | None = None
    ) -> MeGetOutput: ...

    @overload
    def call(
        self, operation: Literal["memories.attest"], fields: MemoriesAttestInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> MemoriesAttestOutput: ...

    @overload
    def call(
        self, operation: Literal["memories.correct"], fields: MemoriesCorrectInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> MemoriesCorrectOutput: ...

    @overload
    def call(
        self, operation: Literal["memories.create"], fields: MemoriesCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> MemoriesCreateOutput: ...

    @overload
    def call(
        self, operation: Literal["memories.forget"], fields: MemoriesForgetInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> MemoriesForgetOutput: ...

    @overload
    def call(
        self, operation: Literal["memories.get"], fields: MemoriesGetInput, *, request_id: str | None = None
    ) -> MemoriesGetOutput: ...

    @overload
    def call(
        self, operation: Literal["memories.history"], fields: MemoriesHistoryInput, *, request_id: str | None = None
    ) -> MemoriesHistoryOutput: ...

    @overload
    def call(
        self, operation: Literal["memories.list"], fields: MemoriesListInput, *, request_id: str | None = None
    ) -> MemoriesListOutput: ...

    @overload
    def call(
        self, operation: Literal["namespaces.create"], fields: NamespacesCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> NamespacesCreateOutput: ...

    @overload
    def call(
        self, operation: Literal["namespaces.get"], fields: NamespacesGetInput, *, request_id: str | None = None
    ) -> NamespacesGetOutput: ...

    @overload
    def call(
        self, operation: Literal["namespaces.grants.list"], fields: NamespacesGrantsListInput, *, request_id: str | None = None
    ) -> NamespacesGrantsListOutput: ...

    @overload
    def call(
        self, operation: Literal["namespaces.grants.put"], fields: NamespacesGrantsPutInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> NamespacesGrantsPutOutput: ...

    @overload
    def call(
        self, operation: Literal["namespaces.list"], fields: NamespacesListInput | None = None, *, request_id: str | None = None
    ) -> NamespacesListOutput: ...

    @overload
    def call(
        self, operation: Literal["namespaces.update"], fields: NamespacesUpdateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> NamespacesUpdateOutput: ...

    @overload
    def call(
        self, operation: Literal["recall"], fields: RecallInput, *, request_id: str | None = None
    ) -> RecallOutput: ...

    @overload
    def call(
        self, operation: Literal["webhooks.create"], fields: WebhooksCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> WebhooksCreateOutput: ...

    @overload
    def call(
        self, operation: Literal["webhooks.delete"], fields: WebhooksDeleteInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> WebhooksDeleteOutput: ...

    @overload
    def call(
        self, operation: Literal["webhooks.list"], fields: WebhooksListInput | None = None, *, request_id: str | None = None
    ) -> WebhooksListOutput: ...

    @overload
    def call(
        self, operation: Literal["workspaces.create"], fields: WorkspacesCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> WorkspacesCreateOutput: ...

    @overload
    def call(
        self, operation: Literal["workspaces.list"], fields: WorkspacesListInput | None = None, *, request_id: str | None = None
    ) -> WorkspacesListOutput: ...

    @overload
    def call(
        self, operation: Literal["workspaces.members.put"], fields: WorkspacesMembersPutInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> WorkspacesMembersPutOutput: ...

    def call(
        self,
        operation: OperationName,
        fields: Mapping[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> Any:

        """Call an operation by its catalog name with its fields in one dict (path, query and body alike).

        `idempotency_key` applies to idempotent writes only (others take none).
        """

        spec = OPERATIONS.get(operation)

        if spec is None:
            raise ValueError(f"unknown operation {operation!r}")

        if idempotency_key is not None and not spec.idempotent:

            raise TypeError(f"{operation} takes no idempotency_key")

        return self._call(
            operation, dict(fields or {}), idempotency_key=idempotency_key, request_id=request_id
        )

    @overload
    def paginate(
        self,
        operation: Literal["changes.list"],
        *,
        after: int | NotGiven = NOT_GIVEN,
        limit: int | NotGiven = NOT_GIVEN,
        namespace_id: str | NotGiven = NOT_GIVEN,
        include_descendants: bool | NotGiven = NOT_GIVEN,
        wait_ms: int | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> Iterator[ChangesListOutputChange]: ...

    @overload
    def paginate(
        self,
        operation: Literal["credentials.list"],
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        product_installation_id: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> Iterator[CredentialsCreateOutputCredential]: ...

    @overload
    def paginate(
        self,
        operation: Literal["evidence.get"],
        *,
        id: str,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> Iterator[Verification]: ...

    @overload
    def paginate(
        self,
        operation: Literal["installations.list"],
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> Iterator[InstallationsCreateOutputInstallation]: ...

    @overload
    def paginate(
        self,
        operation: Literal["memories.history"],
        *,
        id: str,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> Iterator[Revision]: ...

    @overload
    def paginate(
        self,
        operation: Literal["memories.list"],
        *,
        namespace_id: str,
        kind: Literal["claim", "episode", "procedure"] | NotGiven = NOT_GIVEN,
        key: str | NotGiven = NOT_GIVEN,
        as_of: float | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> Iterator[MemoryListItem]: ...

    @overload
    def paginate(
        self,
        operation: Literal["namespaces.list"],
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        parent_id: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> Iterator[Namespace]: ...

    @overload
    def paginate(
        self,
        operation: Literal["webhooks.list"],
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> Iterator[WebhooksCreateOutputWebhook]: ...

    @overload
    def paginate(
        self,
        operation: Literal["workspaces.list"],
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> Iterator[Workspace]: ...

    def paginate(
        self, operation: PagedOperationName, *, request_id: str | None = None, **fields: Any
    ) -> Iterator[Any]:

        """Every item of a paged listing (`changes.list`, `credentials.list`, `evidence.get`, `installations.list`, `memories.history`, `memories.list`, `namespaces.list`, `webhooks.list`, `workspaces.list`), page after page.

        Takes the fields of the listing as keyword arguments and follows its cursor until the last page;
        a feed paged by `after` ends when it has caught up.
        """

        return self._paginate(operation, given(**fields), request_id=request_id)

    def recall_when_indexed(
        self,
        *,
        after: SequenceRef,
        namespace_ids: Sequence[str],
        query: str,
        as_of: float | NotGiven = NOT_GIVEN,
        budget: RecallInputBudget | NotGiven = NOT_GIVEN,
        include_descendants: bool | NotGiven = NOT_GIVEN,
        kinds: Sequence[Literal["claim", "episode", "procedure"]] | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        mode: Literal["hybrid", "lexical", "semantic"] | NotGiven = NOT_GIVEN,
        on_pending: Literal["report", "error"] | NotGiven = NOT_GIVEN,
        timeout: float = 30.0,
        request_id: str | None = None,
    ) -> RecallOutput:
        """Recall once the index has caught up with `after`: asks with `min_sequence` and `wait_ms`, again while the
        answer is `pending`, until `timeout` has passed, then returns the last answer.

        Args:
            after: A commit (a dict with its `sequence`) or a bare sequence number.
            as_of: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            budget: Default: `{}`.
            include_descendants: Default: `true`.
            known_at: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            mode: Default: `"hybrid"`.
            on_pending: Default: `"report"`.
            timeout: Seconds to wait for the indexer in all before returning the `pending` answer.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            RecallOutput,
            self._recall_when_indexed(
                given(
                    namespace_ids=namespace_ids,
                    query=query,
                    as_of=as_of,
                    budget=budget,
                    include_descendants=include_descendants,
                    kinds=kinds,
                    known_at=known_at,
                    mode=mode,
                    on_pending=on_pending,
                ),
                after=after,
                timeout=timeout,
                request_id=request_id,
            ),
        )


class AsyncChangesOperations:
    """The `changes.*` operations."""

    def __init__(self, root: AsyncOperations) -> None:
        self._root = root

    async def list(
        self,
        *,
        after: int | NotGiven = NOT_GIVEN,
        limit: int | NotGiven = NOT_GIVEN,
        namespace_id: str | NotGiven = NOT_GIVEN,
        include_descendants: bool | NotGiven = NOT_GIVEN,
        wait_ms: int | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> ChangesListOutput:
        """GET /v1/changes: List the commits after a sequence with the ids they wrote, as far as the caller may read them; optionally wait for the next one.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        At most 100 items per answer.

        Args:
            after: List the changes after this sequence: the `next_after` of the previous page, 0 to start. Default: `0`.
            limit: Items per page. Default: `50`.
            namespace_id: Only items in this namespace.
            include_descendants: With `namespace_id`: also the namespaces below it. Default: `true`.
            wait_ms: When no change follows `after` yet, wait up to this long for the next commit. Default: `0`.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            ChangesListOutput,
            await self._root._call(
                "changes.list",
                given(
                    after=after,
                    limit=limit,
                    namespace_id=namespace_id,
                    include_descendants=include_descendants,
                    wait_ms=wait_ms,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )


class AsyncCredentialsOperations:
    """The `credentials.*` operations."""

    def __init__(self, root: AsyncOperations) -> None:
        self._root = root

    async def create(
        self,
        *,
        capabilities: Sequence[Literal["read", "observe", "verify", "correct", "forget", "admin"]],
        kind: Literal["installation", "service_key"],
        name: str,
        expires_at: float | None | NotGiven = NOT_GIVEN,
        namespace_ids: Sequence[str] | None | NotGiven = NOT_GIVEN,
        product_installation_id: str | NotGiven = NOT_GIVEN,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> CredentialsCreateOutput:
        """POST /v1/credentials: Issue an installation credential or a service key; the answer shows its secret this once (workspace admins only).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.
        The `secret` is shown in this answer only; a replay carries `secret: null`.

        Args:
            expires_at: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999. Default: `null`.
            namespace_ids: Default: `null`.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            CredentialsCreateOutput,
            await self._root._call(
                "credentials.create",
                given(
                    capabilities=capabilities,
                    kind=kind,
                    name=name,
                    expires_at=expires_at,
                    namespace_ids=namespace_ids,
                    product_installation_id=product_installation_id,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    async def list(
        self,
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        product_installation_id: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> CredentialsListOutput:
        """GET /v1/credentials: List installation credentials and service keys of the workspace (never their secrets).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        At most 100 items per answer.

        Args:
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            product_installation_id: Only the credentials of this product installation.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            CredentialsListOutput,
            await self._root._call(
                "credentials.list",
                given(
                    limit=limit,
                    cursor=cursor,
                    product_installation_id=product_installation_id,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    async def revoke(
        self,
        *,
        id: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> CredentialsRevokeOutput:
        """POST /v1/credentials/{id}/revoke: Revoke an installation credential or a service key, effective on the next request.

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the service key addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            CredentialsRevokeOutput,
            await self._root._call(
                "credentials.revoke",
                given(
                    id=id,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )


class AsyncEvidenceOperations:
    """The `evidence.*` operations."""

    def __init__(self, root: AsyncOperations) -> None:
        self._root = root

    async def create(
        self,
        *,
        content_root_sha256: str,
        excerpt: str,
        namespace_id: str,
        source_locator: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> EvidenceCreateOutput:
        """POST /v1/evidence: Record an exact source excerpt; deduplicated per namespace by its SHA-256.

        OAuth scope `svc:observe` (sessions are not scope-limited).
        Needs the `observe` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            EvidenceCreateOutput,
            await self._root._call(
                "evidence.create",
                given(
                    content_root_sha256=content_root_sha256,
                    excerpt=excerpt,
                    namespace_id=namespace_id,
                    source_locator=source_locator,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    async def forget(
        self,
        *,
        id: str,
        dry_run: bool | NotGiven = NOT_GIVEN,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> EvidenceForgetOutput:
        """POST /v1/evidence/{id}/forget: Purge an evidence excerpt from the ledger, answering a deletion receipt.

        OAuth scope `svc:forget` (sessions are not scope-limited).
        Needs the `forget` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the evidence addressed.
            dry_run: Default: `false`.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            EvidenceForgetOutput,
            await self._root._call(
                "evidence.forget",
                given(
                    id=id,
                    dry_run=dry_run,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    async def get(
        self,
        *,
        id: str,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> EvidenceGetOutput:
        """GET /v1/evidence/{id}: Read evidence with a page of its verifications (oldest first, 32 a page).

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).

        Args:
            id: Id of the evidence addressed.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            EvidenceGetOutput,
            await self._root._call(
                "evidence.get",
                given(
                    id=id,
                    cursor=cursor,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    async def verify(
        self,
        *,
        id: str,
        expected_content_root_sha256: str,
        expected_excerpt_sha256: str,
        verdict: Literal["verified", "rejected"],
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> EvidenceVerifyOutput:
        """POST /v1/evidence/{id}/verifications: Record a verdict on evidence after comparing both expected hashes with the ledger.

        OAuth scope `svc:verify` (sessions are not scope-limited).
        Needs the `verify` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the evidence addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            EvidenceVerifyOutput,
            await self._root._call(
                "evidence.verify",
                given(
                    id=id,
                    expected_content_root_sha256=expected_content_root_sha256,
                    expected_excerpt_sha256=expected_excerpt_sha256,
                    verdict=verdict,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )


class AsyncInstallationsOperations:
    """The `installations.*` operations."""

    def __init__(self, root: AsyncOperations) -> None:
        self._root = root

    async def create(
        self,
        *,
        name: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> InstallationsCreateOutput:
        """POST /v1/installations: Install a product into the workspace; grants may then target it (workspace admins only).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            InstallationsCreateOutput,
            await self._root._call(
                "installations.create",
                given(
                    name=name,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    async def list(
        self,
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> InstallationsListOutput:
        """GET /v1/installations: List the product installations of the workspace, oldest first (workspace admins only).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        At most 100 items per answer.

        Args:
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            InstallationsListOutput,
            await self._root._call(
                "installations.list",
                given(
                    limit=limit,
                    cursor=cursor,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    async def revoke(
        self,
        *,
        id: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> InstallationsRevokeOutput:
        """POST /v1/installations/{id}/revoke: Revoke an installation and every credential issued for it, effective on the next request.

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the product installation addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            InstallationsRevokeOutput,
            await self._root._call(
                "installations.revoke",
                given(
                    id=id,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )


class AsyncLedgerOperations:
    """The `ledger.*` operations."""

    def __init__(self, root: AsyncOperations) -> None:
        self._root = root

    async def head(
        self,
        *,
        request_id: str | None = None,
    ) -> LedgerHeadOutput:
        """GET /v1/ledger/head: The workspace's latest sequence and chain hash, signed by the service's ledger key, for a reader to keep.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).

        Args:
            request_id: Sent as X-Request-Id.
        """
        return cast(
            LedgerHeadOutput,
            await self._root._call(
                "ledger.head",
                given(),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    async def proof(
        self,
        *,
        id: str,
        head_sequence: int | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> LedgerProofOutput:
        """GET /v1/ledger/proofs/{id}: Prove a revision, evidence or verification: the commit that wrote it, its digest input (hashes only) and the chain from there to a signed head.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).

        Args:
            id: Id of the revision, evidence or verification addressed.
            head_sequence: Prove against the head at this sequence (a head kept earlier); default: the latest.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            LedgerProofOutput,
            await self._root._call(
                "ledger.proof",
                given(
                    id=id,
                    head_sequence=head_sequence,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )


class AsyncMeOperations:
    """The `me.*` operations."""

    def __init__(self, root: AsyncOperations) -> None:
        self._root = root

    async def get(
        self,
        *,
        request_id: str | None = None,
    ) -> MeGetOutput:
        """GET /v1/me: Who the server resolved the caller to: actor, caller kind, workspace and scopes.

        No OAuth scope is needed.
        Needs no workspace.

        Args:
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MeGetOutput,
            await self._root._call(
                "me.get",
                given(),
                idempotency_key=None,
                request_id=request_id,
            ),
        )


class AsyncMemoriesOperations:
    """The `memories.*` operations."""

    def __init__(self, root: AsyncOperations) -> None:
        self._root = root

    async def attest(
        self,
        *,
        id: str,
        evidence_ids: Sequence[str],
        expected_generation: int,
        verification_ids: Sequence[str],
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> MemoriesAttestOutput:
        """POST /v1/memories/{id}/attestations: Promote the current revision to asserted, citing verified evidence, as a new revision.

        OAuth scope `svc:verify` (sessions are not scope-limited).
        Needs the `verify` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the memory addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesAttestOutput,
            await self._root._call(
                "memories.attest",
                given(
                    id=id,
                    evidence_ids=evidence_ids,
                    expected_generation=expected_generation,
                    verification_ids=verification_ids,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    async def correct(
        self,
        *,
        id: str,
        expected_generation: int,
        dry_run: bool | NotGiven = NOT_GIVEN,
        evidence_ids: Sequence[str] | NotGiven = NOT_GIVEN,
        support_revision_ids: Sequence[str] | NotGiven = NOT_GIVEN,
        text: str | NotGiven = NOT_GIVEN,
        valid_from: float | NotGiven = NOT_GIVEN,
        valid_to: float | None | NotGiven = NOT_GIVEN,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> MemoriesCorrectOutput:
        """POST /v1/memories/{id}/corrections: Supersede the current revision with a corrected one; dependents are invalidated.

        OAuth scope `svc:correct` (sessions are not scope-limited).
        Needs the `correct` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the memory addressed.
            dry_run: Default: `false`.
            valid_from: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            valid_to: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesCorrectOutput,
            await self._root._call(
                "memories.correct",
                given(
                    id=id,
                    expected_generation=expected_generation,
                    dry_run=dry_run,
                    evidence_ids=evidence_ids,
                    support_revision_ids=support_revision_ids,
                    text=text,
                    valid_from=valid_from,
                    valid_to=valid_to,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    async def create(
        self,
        *,
        kind: Literal["claim", "episode", "procedure"],
        namespace_id: str,
        text: str,
        valid_from: float,
        evidence_ids: Sequence[str] | NotGiven = NOT_GIVEN,
        key: str | NotGiven = NOT_GIVEN,
        support_revision_ids: Sequence[str] | NotGiven = NOT_GIVEN,
        valid_to: float | None | NotGiven = NOT_GIVEN,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> MemoriesCreateOutput:
        """POST /v1/memories: Create a memory with its first revision (asserted when verified evidence backs it).

        OAuth scope `svc:observe` (sessions are not scope-limited).
        Needs the `observe` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            valid_from: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            evidence_ids: Default: `[]`.
            support_revision_ids: Default: `[]`.
            valid_to: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999. Default: `null`.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesCreateOutput,
            await self._root._call(
                "memories.create",
                given(
                    kind=kind,
                    namespace_id=namespace_id,
                    text=text,
                    valid_from=valid_from,
                    evidence_ids=evidence_ids,
                    key=key,
                    support_revision_ids=support_revision_ids,
                    valid_to=valid_to,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    async def forget(
        self,
        *,
        id: str,
        expected_generation: int,
        mode: Literal["retract", "purge"],
        dry_run: bool | NotGiven = NOT_GIVEN,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> MemoriesForgetOutput:
        """POST /v1/memories/{id}/forget: Retract a memory (known until now) or purge it (erased at every known_at, with a receipt).

        OAuth scope `svc:forget` (sessions are not scope-limited).
        Needs the `forget` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the memory addressed.
            dry_run: Default: `false`.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesForgetOutput,
            await self._root._call(
                "memories.forget",
                given(
                    id=id,
                    expected_generation=expected_generation,
                    mode=mode,
                    dry_run=dry_run,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    async def get(
        self,
        *,
        id: str,
        as_of: float | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        include_evidence: bool | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> MemoriesGetOutput:
        """GET /v1/memories/{id}: Read a memory as it held at as_of and as the service knew it at known_at.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).

        Args:
            id: Id of the memory addressed.
            as_of: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            known_at: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            include_evidence: Whether the view carries the evidence behind the revision. Default: `false`.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesGetOutput,
            await self._root._call(
                "memories.get",
                given(
                    id=id,
                    as_of=as_of,
                    known_at=known_at,
                    include_evidence=include_evidence,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    async def history(
        self,
        *,
        id: str,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> MemoriesHistoryOutput:
        """GET /v1/memories/{id}/history: List the revisions of a memory, newest generation first, as known at known_at.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        At most 100 items per answer.

        Args:
            id: Id of the memory addressed.
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            known_at: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesHistoryOutput,
            await self._root._call(
                "memories.history",
                given(
                    id=id,
                    limit=limit,
                    cursor=cursor,
                    known_at=known_at,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    async def list(
        self,
        *,
        namespace_id: str,
        kind: Literal["claim", "episode", "procedure"] | NotGiven = NOT_GIVEN,
        key: str | NotGiven = NOT_GIVEN,
        as_of: float | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> MemoriesListOutput:
        """GET /v1/memories: List the memories of a namespace current at known_at and valid at as_of (optionally the one holding a key).

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        At most 100 items per answer.

        Args:
            namespace_id: Only items in this namespace.
            kind: Only memories of this kind.
            key: Only the memories holding this key (compared exactly) as seen at `as_of` and `known_at`: at most one.
            as_of: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            known_at: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            MemoriesListOutput,
            await self._root._call(
                "memories.list",
                given(
                    namespace_id=namespace_id,
                    kind=kind,
                    key=key,
                    as_of=as_of,
                    known_at=known_at,
                    limit=limit,
                    cursor=cursor,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )


class AsyncNamespacesGrantsOperations:
    """The `namespaces.grants.*` operations."""

    def __init__(self, root: AsyncOperations) -> None:
        self._root = root

    async def list(
        self,
        *,
        id: str,
        request_id: str | None = None,
    ) -> NamespacesGrantsListOutput:
        """GET /v1/namespaces/{id}/grants: Read the grants on a namespace, in their stored order (admins of the namespace only).

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `admin` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        At most 100 items per answer.

        Args:
            id: Id of the namespace addressed.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            NamespacesGrantsListOutput,
            await self._root._call(
                "namespaces.grants.list",
                given(
                    id=id,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    async def put(
        self,
        *,
        id: str,
        grants: Sequence[NamespacesGrantsPutInputGrant],
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> NamespacesGrantsPutOutput:
        """PUT /v1/namespaces/{id}/grants: Replace the grants on a namespace; omitted grants are revoked at once.

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Needs the `admin` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.
        At most 100 items per answer.

        Args:
            id: Id of the namespace addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            NamespacesGrantsPutOutput,
            await self._root._call(
                "namespaces.grants.put",
                given(
                    id=id,
                    grants=grants,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )


class AsyncNamespacesOperations:
    """The `namespaces.*` operations."""

    grants: AsyncNamespacesGrantsOperations

    def __init__(self, root: AsyncOperations) -> None:
        self._root = root
        self.grants = AsyncNamespacesGrantsOperations(root)

    async def create(
        self,
        *,
        name: str,
        parent_id: str | None,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> NamespacesCreateOutput:
        """POST /v1/namespaces: Create a namespace at the root (workspace admins) or under a parent (admin on the parent).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Needs the `admin` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            NamespacesCreateOutput,
            await self._root._call(
                "namespaces.create",
                given(
                    name=name,
                    parent_id=parent_id,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    async def get(
        self,
        *,
        id: str,
        request_id: str | None = None,
    ) -> NamespacesGetOutput:
        """GET /v1/namespaces/{id}: Read one namespace.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).

        Args:
            id: Id of the namespace addressed.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            NamespacesGetOutput,
            await self._root._call(
                "namespaces.get",
                given(
                    id=id,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    async def list(
        self,
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        parent_id: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> NamespacesListOutput:
        """GET /v1/namespaces: List readable namespaces by display path, or the readable children of parent_id.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        At most 100 items per answer.

        Args:
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            parent_id: List the readable children of this namespace instead of the whole workspace.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            NamespacesListOutput,
            await self._root._call(
                "namespaces.list",
                given(
                    limit=limit,
                    cursor=cursor,
                    parent_id=parent_id,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    async def update(
        self,
        *,
        id: str,
        name: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> NamespacesUpdateOutput:
        """PATCH /v1/namespaces/{id}: Rename a namespace.

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Needs the `admin` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the namespace addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            NamespacesUpdateOutput,
            await self._root._call(
                "namespaces.update",
                given(
                    id=id,
                    name=name,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )


class AsyncWebhooksOperations:
    """The `webhooks.*` operations."""

    def __init__(self, root: AsyncOperations) -> None:
        self._root = root

    async def create(
        self,
        *,
        url: str,
        description: str | NotGiven = NOT_GIVEN,
        namespace_id: str | NotGiven = NOT_GIVEN,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> WebhooksCreateOutput:
        """POST /v1/webhooks: Register an endpoint for signed deliveries of the workspace changes; the answer shows its signing secret this once (workspace admins only).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.
        The `secret` is shown in this answer only; a replay carries `secret: null`.

        Args:
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            WebhooksCreateOutput,
            await self._root._call(
                "webhooks.create",
                given(
                    url=url,
                    description=description,
                    namespace_id=namespace_id,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    async def delete(
        self,
        *,
        id: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> WebhooksDeleteOutput:
        """DELETE /v1/webhooks/{id}: Delete a webhook: no delivery starts after this answer. Deleting it again answers `commit: null`.

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            id: Id of the webhook addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            WebhooksDeleteOutput,
            await self._root._call(
                "webhooks.delete",
                given(
                    id=id,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    async def list(
        self,
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> WebhooksListOutput:
        """GET /v1/webhooks: List the webhooks of the workspace with their delivery state, oldest first (workspace admins only).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by `X-Service-Workspace`.
        At most 100 items per answer.

        Args:
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            WebhooksListOutput,
            await self._root._call(
                "webhooks.list",
                given(
                    limit=limit,
                    cursor=cursor,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )


class AsyncWorkspacesMembersOperations:
    """The `workspaces.members.*` operations."""

    def __init__(self, root: AsyncOperations) -> None:
        self._root = root

    async def put(
        self,
        *,
        id: str,
        members: Sequence[Member],
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> WorkspacesMembersPutOutput:
        """PUT /v1/workspaces/{id}/members: Replace the member list of a workspace (workspace admins only).

        OAuth scope `svc:admin` (sessions are not scope-limited).
        Only workspace admins may call it.
        Runs in the workspace named by the path.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.
        At most 100 items per answer.

        Args:
            id: Id of the workspace addressed.
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            WorkspacesMembersPutOutput,
            await self._root._call(
                "workspaces.members.put",
                given(
                    id=id,
                    members=members,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )


class AsyncWorkspacesOperations:
    """The `workspaces.*` operations."""

    members: AsyncWorkspacesMembersOperations

    def __init__(self, root: AsyncOperations) -> None:
        self._root = root
        self.members = AsyncWorkspacesMembersOperations(root)

    async def create(
        self,
        *,
        name: str,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> WorkspacesCreateOutput:
        """POST /v1/workspaces: Create a workspace; the enrolled human caller becomes its first admin.

        No OAuth scope is needed.
        Needs no workspace.
        Send an `Idempotency-Key`: a retry with the same key and request replays the stored answer.
        Writes, and answers with the commit it made.

        Args:
            idempotency_key: The Idempotency-Key of this write; by default a fresh one, reused by every retry.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            WorkspacesCreateOutput,
            await self._root._call(
                "workspaces.create",
                given(
                    name=name,
                ),
                idempotency_key=idempotency_key,
                request_id=request_id,
            ),
        )

    async def list(
        self,
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> WorkspacesListOutput:
        """GET /v1/workspaces: List the workspaces the caller belongs to, and whether it may create one.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs no workspace.
        At most 100 items per answer.

        Args:
            limit: Items per page. Default: `50`.
            cursor: Opaque `next_cursor` of the previous page; valid only for the listing (operation, workspace, filter) that issued it.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            WorkspacesListOutput,
            await self._root._call(
                "workspaces.list",
                given(
                    limit=limit,
                    cursor=cursor,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )


class AsyncOperations:
    """One method per operation of the API, nested by the dots of its name (the asynchronous flavour)."""

    changes: AsyncChangesOperations
    credentials: AsyncCredentialsOperations
    evidence: AsyncEvidenceOperations
    installations: AsyncInstallationsOperations
    ledger: AsyncLedgerOperations
    me: AsyncMeOperations
    memories: AsyncMemoriesOperations
    namespaces: AsyncNamespacesOperations
    webhooks: AsyncWebhooksOperations
    workspaces: AsyncWorkspacesOperations

    def __init__(self) -> None:
        self.changes = AsyncChangesOperations(self)
        self.credentials = AsyncCredentialsOperations(self)
        self.evidence = AsyncEvidenceOperations(self)
        self.installations = AsyncInstallationsOperations(self)
        self.ledger = AsyncLedgerOperations(self)
        self.me = AsyncMeOperations(self)
        self.memories = AsyncMemoriesOperations(self)
        self.namespaces = AsyncNamespacesOperations(self)
        self.webhooks = AsyncWebhooksOperations(self)
        self.workspaces = AsyncWorkspacesOperations(self)

    async def _call(
        self,
        operation: OperationName,
        fields: Mapping[str, object],
        *,
        idempotency_key: str | None,
        request_id: str | None,
    ) -> Any:
        raise NotImplementedError

    def _paginate(
        self, operation: PagedOperationName, fields: Mapping[str, object], *, request_id: str | None
    ) -> AsyncIterator[Any]:
        raise NotImplementedError

    async def _recall_when_indexed(
        self, fields: Mapping[str, object], *, after: SequenceRef, timeout: float, request_id: str | None
    ) -> Any:
        raise NotImplementedError

    async def recall(
        self,
        *,
        namespace_ids: Sequence[str],
        query: str,
        as_of: float | NotGiven = NOT_GIVEN,
        budget: RecallInputBudget | NotGiven = NOT_GIVEN,
        include_descendants: bool | NotGiven = NOT_GIVEN,
        kinds: Sequence[Literal["claim", "episode", "procedure"]] | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        min_sequence: int | NotGiven = NOT_GIVEN,
        mode: Literal["hybrid", "lexical", "semantic"] | NotGiven = NOT_GIVEN,
        on_pending: Literal["report", "error"] | NotGiven = NOT_GIVEN,
        wait_ms: int | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> RecallOutput:
        """POST /v1/recall: Retrieve memories relevant to a query, with an honest status of how complete the answer is.

        OAuth scope `svc:read` (sessions are not scope-limited).
        Needs the `read` capability on the namespace concerned.
        Runs in the workspace named by `X-Service-Workspace` (a service key or installation credential may omit it: it runs in its own).
        At most 100 items per answer.

        Args:
            as_of: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            budget: Default: `{}`.
            include_descendants: Default: `true`.
            known_at: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            mode: Default: `"hybrid"`.
            on_pending: Default: `"report"`.
            wait_ms: Default: `0`.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            RecallOutput,
            await self._call(
                "recall",
                given(
                    namespace_ids=namespace_ids,
                    query=query,
                    as_of=as_of,
                    budget=budget,
                    include_descendants=include_descendants,
                    kinds=kinds,
                    known_at=known_at,
                    min_sequence=min_sequence,
                    mode=mode,
                    on_pending=on_pending,
                    wait_ms=wait_ms,
                ),
                idempotency_key=None,
                request_id=request_id,
            ),
        )

    @overload
    async def call(
        self, operation: Literal["changes.list"], fields: ChangesListInput | None = None, *, request_id: str | None = None
    ) -> ChangesListOutput: ...

    @overload
    async def call(
        self, operation: Literal["credentials.create"], fields: CredentialsCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> CredentialsCreateOutput: ...

    @overload
    async def call(
        self, operation: Literal["credentials.list"], fields: CredentialsListInput | None = None, *, request_id: str | None = None
    ) -> CredentialsListOutput: ...

    @overload
    async def call(
        self, operation: Literal["credentials.revoke"], fields: CredentialsRevokeInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> CredentialsRevokeOutput: ...

    @overload
    async def call(
        self, operation: Literal["evidence.create"], fields: EvidenceCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> EvidenceCreateOutput: ...

    @overload
    async def call(
        self, operation: Literal["evidence.forget"], fields: EvidenceForgetInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> EvidenceForgetOutput: ...

    @overload
    async def call(
        self, operation: Literal["evidence.get"], fields: EvidenceGetInput, *, request_id: str | None = None
    ) -> EvidenceGetOutput: ...

    @overload
    async def call(
        self, operation: Literal["evidence.verify"], fields: EvidenceVerifyInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> EvidenceVerifyOutput: ...

    @overload
    async def call(
        self, operation: Literal["installations.create"], fields: InstallationsCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> InstallationsCreateOutput: ...

    @overload
    async def call(
        self, operation: Literal["installations.list"], fields: InstallationsListInput | None = None, *, request_id: str | None = None
    ) -> InstallationsListOutput: ...

    @overload
    async def call(
        self, operation: Literal["installations.revoke"], fields: InstallationsRevokeInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> InstallationsRevokeOutput: ...

    @overload
    async def call(
        self, operation: Literal["ledger.head"], fields: LedgerHeadInput | None = None, *, request_id: str | None = None
    ) -> LedgerHeadOutput: ...

    @overload
    async def call(
        self, operation: Literal["ledger.proof"], fields: LedgerProofInput, *, request_id: str | None = None
    ) -> LedgerProofOutput: ...

    @overload
    async def call(
        self, operation: Literal["me.get"], fields: MeGetInput | None = None, *, request_id: str | None = None
    ) -> MeGetOutput: ...

    @overload
    async def call(
        self, operation: Literal["memories.attest"], fields: MemoriesAttestInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> MemoriesAttestOutput: ...

    @overload
    async def call(
        self, operation: Literal["memories.correct"], fields: MemoriesCorrectInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> MemoriesCorrectOutput: ...

    @overload
    async def call(
        self, operation: Literal["memories.create"], fields: MemoriesCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> MemoriesCreateOutput: ...

    @overload
    async def call(
        self, operation: Literal["memories.forget"], fields: MemoriesForgetInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> MemoriesForgetOutput: ...

    @overload
    async def call(
        self, operation: Literal["memories.get"], fields: MemoriesGetInput, *, request_id: str | None = None
    ) -> MemoriesGetOutput: ...

    @overload
    async def call(
        self, operation: Literal["memories.history"], fields: MemoriesHistoryInput, *, request_id: str | None = None
    ) -> MemoriesHistoryOutput: ...

    @overload
    async def call(
        self, operation: Literal["memories.list"], fields: MemoriesListInput, *, request_id: str | None = None
    ) -> MemoriesListOutput: ...

    @overload
    async def call(
        self, operation: Literal["namespaces.create"], fields: NamespacesCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> NamespacesCreateOutput: ...

    @overload
    async def call(
        self, operation: Literal["namespaces.get"], fields: NamespacesGetInput, *, request_id: str | None = None
    ) -> NamespacesGetOutput: ...

    @overload
    async def call(
        self, operation: Literal["namespaces.grants.list"], fields: NamespacesGrantsListInput, *, request_id: str | None = None
    ) -> NamespacesGrantsListOutput: ...

    @overload
    async def call(
        self, operation: Literal["namespaces.grants.put"], fields: NamespacesGrantsPutInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> NamespacesGrantsPutOutput: ...

    @overload
    async def call(
        self, operation: Literal["namespaces.list"], fields: NamespacesListInput | None = None, *, request_id: str | None = None
    ) -> NamespacesListOutput: ...

    @overload
    async def call(
        self, operation: Literal["namespaces.update"], fields: NamespacesUpdateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> NamespacesUpdateOutput: ...

    @overload
    async def call(
        self, operation: Literal["recall"], fields: RecallInput, *, request_id: str | None = None
    ) -> RecallOutput: ...

    @overload
    async def call(
        self, operation: Literal["webhooks.create"], fields: WebhooksCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> WebhooksCreateOutput: ...

    @overload
    async def call(
        self, operation: Literal["webhooks.delete"], fields: WebhooksDeleteInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> WebhooksDeleteOutput: ...

    @overload
    async def call(
        self, operation: Literal["webhooks.list"], fields: WebhooksListInput | None = None, *, request_id: str | None = None
    ) -> WebhooksListOutput: ...

    @overload
    async def call(
        self, operation: Literal["workspaces.create"], fields: WorkspacesCreateInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> WorkspacesCreateOutput: ...

    @overload
    async def call(
        self, operation: Literal["workspaces.list"], fields: WorkspacesListInput | None = None, *, request_id: str | None = None
    ) -> WorkspacesListOutput: ...

    @overload
    async def call(
        self, operation: Literal["workspaces.members.put"], fields: WorkspacesMembersPutInput, *, idempotency_key: str | None = None, request_id: str | None = None
    ) -> WorkspacesMembersPutOutput: ...

    async def call(
        self,
        operation: OperationName,
        fields: Mapping[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
        request_id: str | None = None,
    ) -> Any:

        """Call an operation by its catalog name with its fields in one dict (path, query and body alike).

        `idempotency_key` applies to idempotent writes only (others take none).
        """

        spec = OPERATIONS.get(operation)

        if spec is None:
            raise ValueError(f"unknown operation {operation!r}")

        if idempotency_key is not None and not spec.idempotent:

            raise TypeError(f"{operation} takes no idempotency_key")

        return await self._call(
            operation, dict(fields or {}), idempotency_key=idempotency_key, request_id=request_id
        )

    @overload
    def paginate(
        self,
        operation: Literal["changes.list"],
        *,
        after: int | NotGiven = NOT_GIVEN,
        limit: int | NotGiven = NOT_GIVEN,
        namespace_id: str | NotGiven = NOT_GIVEN,
        include_descendants: bool | NotGiven = NOT_GIVEN,
        wait_ms: int | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> AsyncIterator[ChangesListOutputChange]: ...

    @overload
    def paginate(
        self,
        operation: Literal["credentials.list"],
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        product_installation_id: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> AsyncIterator[CredentialsCreateOutputCredential]: ...

    @overload
    def paginate(
        self,
        operation: Literal["evidence.get"],
        *,
        id: str,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> AsyncIterator[Verification]: ...

    @overload
    def paginate(
        self,
        operation: Literal["installations.list"],
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> AsyncIterator[InstallationsCreateOutputInstallation]: ...

    @overload
    def paginate(
        self,
        operation: Literal["memories.history"],
        *,
        id: str,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> AsyncIterator[Revision]: ...

    @overload
    def paginate(
        self,
        operation: Literal["memories.list"],
        *,
        namespace_id: str,
        kind: Literal["claim", "episode", "procedure"] | NotGiven = NOT_GIVEN,
        key: str | NotGiven = NOT_GIVEN,
        as_of: float | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> AsyncIterator[MemoryListItem]: ...

    @overload
    def paginate(
        self,
        operation: Literal["namespaces.list"],
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        parent_id: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> AsyncIterator[Namespace]: ...

    @overload
    def paginate(
        self,
        operation: Literal["webhooks.list"],
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> AsyncIterator[WebhooksCreateOutputWebhook]: ...

    @overload
    def paginate(
        self,
        operation: Literal["workspaces.list"],
        *,
        limit: int | NotGiven = NOT_GIVEN,
        cursor: str | NotGiven = NOT_GIVEN,
        request_id: str | None = None,
    ) -> AsyncIterator[Workspace]: ...

    def paginate(
        self, operation: PagedOperationName, *, request_id: str | None = None, **fields: Any
    ) -> AsyncIterator[Any]:

        """Every item of a paged listing (`changes.list`, `credentials.list`, `evidence.get`, `installations.list`, `memories.history`, `memories.list`, `namespaces.list`, `webhooks.list`, `workspaces.list`), page after page.

        Takes the fields of the listing as keyword arguments and follows its cursor until the last page;
        a feed paged by `after` ends when it has caught up.
        """

        return self._paginate(operation, given(**fields), request_id=request_id)

    async def recall_when_indexed(
        self,
        *,
        after: SequenceRef,
        namespace_ids: Sequence[str],
        query: str,
        as_of: float | NotGiven = NOT_GIVEN,
        budget: RecallInputBudget | NotGiven = NOT_GIVEN,
        include_descendants: bool | NotGiven = NOT_GIVEN,
        kinds: Sequence[Literal["claim", "episode", "procedure"]] | NotGiven = NOT_GIVEN,
        known_at: float | NotGiven = NOT_GIVEN,
        mode: Literal["hybrid", "lexical", "semantic"] | NotGiven = NOT_GIVEN,
        on_pending: Literal["report", "error"] | NotGiven = NOT_GIVEN,
        timeout: float = 30.0,
        request_id: str | None = None,
    ) -> RecallOutput:
        """Recall once the index has caught up with `after`: asks with `min_sequence` and `wait_ms`, again while the
        answer is `pending`, until `timeout` has passed, then returns the last answer.

        Args:
            after: A commit (a dict with its `sequence`) or a bare sequence number.
            as_of: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            budget: Default: `{}`.
            include_descendants: Default: `true`.
            known_at: UTC Unix seconds (not milliseconds), fractions allowed, in the years 0001-9999.
            mode: Default: `"hybrid"`.
            on_pending: Default: `"report"`.
            timeout: Seconds to wait for the indexer in all before returning the `pending` answer.
            request_id: Sent as X-Request-Id.
        """
        return cast(
            RecallOutput,
            await self._recall_when_indexed(
                given(
                    namespace_ids=namespace_ids,
                    query=query,
                    as_of=as_of,
                    budget=budget,
                    include_descendants=include_descendants,
                    kinds=kinds,
                    known_at=known_at,
                    mode=mode,
                    on_pending=on_pending,
                ),
                after=after,
                timeout=timeout,
                request_id=request_id,
            ),
        )


__all__ = [
    "Actor",
    "AsyncChangesOperations",
    "AsyncCredentialsOperations",
    "AsyncEvidenceOperations",
    "AsyncInstallationsOperations",
    "AsyncLedgerOperations",
    "AsyncMeOperations",
    "AsyncMemoriesOperations",
    "AsyncNamespacesGrantsOperations",
    "AsyncNamespacesOperations",
    "AsyncOperations",
    "AsyncWebhooksOperations",
    "AsyncWorkspacesMembersOperations",
    "AsyncWorkspacesOperations",
    "Attestation",
    "ChangesListInput",
    "ChangesListOutput",
    "ChangesListOutputChange",
    "ChangesListOutputChangeSubject",
    "ChangesOperations",
    "Commit",
    "CredentialsCreateInput",
    "CredentialsCreateOutput",
    "CredentialsCreateOutputCredential",
    "CredentialsListInput",
    "CredentialsListOutput",
    "CredentialsOperations",
    "CredentialsRevokeInput",
    "CredentialsRevokeOutput",
    "ERROR_TABLE",
    "ErrorCode",
    "Evidence",
    "EvidenceCreateInput",
    "EvidenceCreateOutput",
    "EvidenceDeletionReceipt",
    "EvidenceForgetInput",
    "EvidenceForgetOutput",
    "EvidenceGetInput",
    "EvidenceGetOutput",
    "EvidenceOperations",
    "EvidenceVerifyInput",
    "EvidenceVerifyOutput",
    "Grant",
    "GrantTarget",
    "GrantTargetActor",
    "GrantTargetCredential",
    "GrantTargetInstallation",
    "InstallationsCreateInput",
    "InstallationsCreateOutput",
    "InstallationsCreateOutputInstallation",
    "InstallationsListInput",
    "InstallationsListOutput",
    "InstallationsOperations",
    "InstallationsRevokeInput",
    "InstallationsRevokeOutput",
    "Invalidation",
    "LedgerHeadInput",
    "LedgerHeadOutput",
    "LedgerHeadOutputHead",
    "LedgerOperations",
    "LedgerProofInput",
    "LedgerProofOutput",
    "MeGetInput",
    "MeGetOutput",
    "MeOperations",
    "Member",
    "MemoriesAttestInput",
    "MemoriesAttestOutput",
    "MemoriesCorrectInput",
    "MemoriesCorrectOutput",
    "MemoriesCreateInput",
    "MemoriesCreateOutput",
    "MemoriesForgetInput",
    "MemoriesForgetOutput",
    "MemoriesForgetOutputWithMemory",
    "MemoriesForgetOutputWithReceipt",
    "MemoriesGetInput",
    "MemoriesGetOutput",
    "MemoriesHistoryInput",
    "MemoriesHistoryOutput",
    "MemoriesListInput",
    "MemoriesListOutput",
    "MemoriesOperations",
    "Memory",
    "MemoryDeletionReceipt",
    "MemoryListItem",
    "MemoryView",
    "Namespace",
    "NamespacesCreateInput",
    "NamespacesCreateOutput",
    "NamespacesGetInput",
    "NamespacesGetOutput",
    "NamespacesGrantsListInput",
    "NamespacesGrantsListOutput",
    "NamespacesGrantsOperations",
    "NamespacesGrantsPutInput",
    "NamespacesGrantsPutInputGrant",
    "NamespacesGrantsPutOutput",
    "NamespacesListInput",
    "NamespacesListOutput",
    "NamespacesOperations",
    "NamespacesUpdateInput",
    "NamespacesUpdateOutput",
    "OPERATIONS",
    "OperationName",
    "Operations",
    "PagedOperationName",
    "RecallInput",
    "RecallInputBudget",
    "RecallOutput",
    "RecallOutputItem",
    "RecallOutputItemRanks",
    "RecallOutputRetrieval",
    "Revision",
    "Verification",
    "WebhooksCreateInput",
    "WebhooksCreateOutput",
    "WebhooksCreateOutputWebhook",
    "WebhooksDeleteInput",
    "WebhooksDeleteOutput",
    "WebhooksListInput",
    "WebhooksListOutput",
    "WebhooksOperations",
    "Workspace",
    "WorkspacesCreateInput",
    "WorkspacesCreateOutput",
    "WorkspacesListInput",
    "WorkspacesListOutput",
    "WorkspacesListOutputEnrollment",
    "WorkspacesMembersOperations",
    "WorkspacesMembersPutInput",
    "WorkspacesMembersPutOutput",
    "WorkspacesOperations",
]
