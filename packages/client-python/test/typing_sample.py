"""A program written against tms_client's types, for `mypy --strict` (scripts/python-tests.mjs runs
it; it is never executed). Each `# type: ignore[...]` marks a call the types must refuse: strict mode
warns about an ignore that is not needed, so a type that got too loose fails the check."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from tms_client import (
    AsyncClient,
    Client,
    Commit,
    ErrorCode,
    GrantTarget,
    LedgerHeadOutput,
    MemoriesCreateInput,
    MemoriesCreateOutput,
    MemoriesForgetOutput,
    Memory,
    MemoryListItem,
    Namespace,
    ProofVerdict,
    RecallOutput,
    RetryEvent,
    RetryPolicy,
    TmsError,
    verify_proof,
)


def remember(client: Client, namespace_id: str) -> Commit:
    created: MemoriesCreateOutput = client.memories.create(
        namespace_id=namespace_id,
        kind="claim",
        text="Ana prefers tea.",
        valid_from=1700000000,
        valid_to=None,
        evidence_ids=("ev_1",),
        idempotency_key="import-42",
    )
    memory: Memory = created["memory"]
    generation: int = memory["generation"]
    assert generation >= 1
    return created["commit"]


def recall(client: Client, namespace_id: str, commit: Commit) -> list[str]:
    answer: RecallOutput = client.recall_when_indexed(
        after=commit, namespace_ids=[namespace_id], query="tea", budget={"max_items": 5}, mode="lexical"
    )
    texts = [item["revision"]["text"] for item in answer["items"]]
    ranks = [item["ranks"]["lexical"] for item in answer["items"]]
    return texts if answer["status"] != "pending" and all(r is None or r >= 1 for r in ranks) else []


def listing(client: Client, namespace_id: str) -> Iterator[MemoryListItem]:
    return client.paginate("memories.list", namespace_id=namespace_id, kind="episode", limit=10)


def namespaces(client: Client) -> list[Namespace]:
    return list(client.paginate("namespaces.list"))


def forget(client: Client, memory_id: str) -> str:
    answer: MemoriesForgetOutput = client.memories.forget(id=memory_id, mode="purge", expected_generation=1)
    # The two answers of forget are told apart by their keys.
    if "receipt" in answer:
        return answer["receipt"]["id"]
    return answer["revision"]["id"]


def by_name(client: Client, fields: MemoriesCreateInput) -> str:
    return client.call("memories.create", fields, request_id="req-1")["memory"]["id"]


def target_name(target: GrantTarget) -> str:
    if target["kind"] == "actor":
        return target["actor_id"]
    if target["kind"] == "installation":
        return target["product_installation_id"]
    return target["credential_id"]


def errors(client: Client) -> ErrorCode | None:
    try:
        client.memories.get(id="mem_missing", include_evidence=True)
    except TmsError as error:
        detail: str | None = error.detail
        return error.code if detail is None else "invalid_input"
    return None


def proof(client: Client, revision_id: str, kept: LedgerHeadOutput) -> bool:
    verdict: ProofVerdict = verify_proof(client.ledger.proof(id=revision_id), pinned_head=kept["head"])
    return bool(verdict) and verdict.record is not None


def configured(url: str) -> Client:
    events: list[RetryEvent] = []
    return Client(
        url, token=lambda: "token", workspace_id="ws_1", retry=RetryPolicy(max_attempts=3), on_retry=events.append
    ).with_workspace("ws_2")


async def asynchronous(url: str) -> list[str]:
    async def token() -> str:
        return "token"

    async with AsyncClient(url, token=token, workspace_id="ws_1") as client:
        created = await client.memories.create(namespace_id="ns_1", kind="episode", text="t", valid_from=1.5)
        items: AsyncIterator[MemoryListItem] = client.paginate("memories.list", namespace_id="ns_1")
        return [created["memory"]["id"]] + [item["memory"]["id"] async for item in items]


def refused(client: Client) -> None:
    client.memories.create(namespace_id="ns_1", kind="fact", text="t", valid_from=1)  # type: ignore[arg-type]
    client.memories.create(namespace_id="ns_1", kind="claim", text="t")  # type: ignore[call-arg]
    client.memories.get(identifier="mem_1")  # type: ignore[call-arg]
    client.memories.get("mem_1")  # type: ignore[call-arg]
    client.namespaces.get(id="ns_1", idempotency_key="k")  # type: ignore[call-arg]
    client.paginate("memories.get", id="mem_1")  # type: ignore[call-overload]
    client.recall(namespace_ids=["ns_1"], query="tea", mode="fuzzy")  # type: ignore[arg-type]
    answer = client.me.get()
    answer["actor"]["name"]  # type: ignore[typeddict-item]
