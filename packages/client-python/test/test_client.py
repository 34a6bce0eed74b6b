"""`Client` against a real gateway on loopback (on each driver), through a TCP proxy that records
what was sent and can cut a connection after the gateway has answered."""

from __future__ import annotations

import re

import httpx
import pytest
from conftest import Gateway, Workspace
from cutting_proxy import CuttingProxy, header_of

from tms_client import (
    AnswerFailure,
    Client,
    NetworkFailure,
    RetryEvent,
    RetryPolicy,
    TmsError,
    TmsNetworkError,
)

FAST = RetryPolicy(base_delay=0.01, max_delay=0.05)


@pytest.fixture
def events() -> list[RetryEvent]:
    return []


@pytest.fixture
def client(proxy: CuttingProxy, workspace: Workspace, events: list[RetryEvent]) -> Client:
    return Client(proxy.url, token=workspace.owner.token, workspace_id=workspace.id, retry=FAST, on_retry=events.append)


def namespace(client: Client, name: str, parent_id: str | None = None) -> str:
    return client.namespaces.create(parent_id=parent_id, name=name)["namespace"]["id"]


def test_sends_the_bound_workspace_to_operations_that_take_one_and_only_to_them(
    client: Client, proxy: CuttingProxy, workspace: Workspace
) -> None:
    before = len(proxy.heads())
    ns = namespace(client, "bound")
    assert client.me.get()["actor"]["id"] == workspace.owner.actor_id
    sent = proxy.heads()[before:]
    create = next(head for head in sent if head.startswith("POST /v1/namespaces "))
    me = next(head for head in sent if head.startswith("GET /v1/me "))
    assert header_of(create, "x-service-workspace") == workspace.id
    assert header_of(me, "x-service-workspace") is None

    # Bound to another workspace of the same person, the namespace is not there.
    other = client.workspaces.create(name="elsewhere")["workspace"]["id"]
    elsewhere = client.with_workspace(other)
    assert elsewhere.workspace_id == other and client.workspace_id == workspace.id
    assert ns not in [item["id"] for item in elsewhere.paginate("namespaces.list")]
    with pytest.raises(TmsError) as missing:
        elsewhere.namespaces.get(id=ns)
    assert (missing.value.code, missing.value.status) == ("not_found", 404)
    assert client.namespaces.get(id=ns)["namespace"]["id"] == ns


def test_a_bound_credential_writes_without_the_workspace_header(
    client: Client, proxy: CuttingProxy, workspace: Workspace
) -> None:
    ns = namespace(client, "keyed")
    issued = client.credentials.create(kind="service_key", name="importer", capabilities=["read", "observe"])
    secret = issued["secret"]
    assert secret is not None
    client.namespaces.grants.put(
        id=ns,
        grants=[
            {
                "target": {"kind": "credential", "credential_id": issued["credential"]["id"]},
                "capabilities": ["read", "observe"],
                "inherit": True,
            }
        ],
    )
    with Client(proxy.url, token=secret, retry=FAST) as keyed:
        assert keyed.workspace_id is None
        created = keyed.memories.create(namespace_id=ns, kind="claim", text="Ana prefers tea.", valid_from=1700000000)
        # The operations for workspace admins are refused for what the caller is, not for the header.
        with pytest.raises(TmsError) as refused:
            keyed.webhooks.list()
        assert refused.value.code == "forbidden"
    [post] = proxy.heads(r"^POST /v1/memories ")[-1:]
    assert header_of(post, "authorization") == f"Bearer {secret}"
    assert header_of(post, "x-service-workspace") is None
    assert client.memories.get(id=created["memory"]["id"])["view"]["revision"]["text"] == "Ana prefers tea."


def test_retries_a_write_whose_answer_was_cut_with_the_same_key_and_it_commits_once(
    client: Client, proxy: CuttingProxy, events: list[RetryEvent]
) -> None:
    ns = namespace(client, "cut")
    cuts = proxy.cuts
    before = len(proxy.heads(r"^POST /v1/memories "))
    proxy.cut(r"^POST /v1/memories ", 1)
    created = client.memories.create(namespace_id=ns, kind="claim", text="Ana prefers tea.", valid_from=1700000000)
    assert proxy.cuts == cuts + 1
    assert [(event.operation, type(event.failure)) for event in events] == [("memories.create", NetworkFailure)]

    posts = proxy.heads(r"^POST /v1/memories ")[before:]
    keys = [header_of(head, "idempotency-key") for head in posts]
    assert len(keys) == 2 and keys[0] == keys[1]
    assert re.fullmatch(r"tms-[0-9a-f]{32}", keys[0] or "")

    listed = [item["memory"]["id"] for item in client.paginate("memories.list", namespace_id=ns)]
    assert listed == [created["memory"]["id"]]
    history = client.memories.history(id=created["memory"]["id"])
    assert [revision["generation"] for revision in history["revisions"]] == [1]


def test_a_key_of_ones_own_replays_the_write(client: Client) -> None:
    ns = namespace(client, "replay")
    first = client.memories.create(
        namespace_id=ns, kind="claim", text="Ana prefers tea.", valid_from=1700000000, idempotency_key="import-42"
    )
    again = client.memories.create(
        namespace_id=ns, kind="claim", text="Ana prefers tea.", valid_from=1700000000, idempotency_key="import-42"
    )
    assert again == first
    with pytest.raises(TmsError) as conflict:
        client.memories.create(
            namespace_id=ns,
            kind="claim",
            text="Ana prefers coffee.",
            valid_from=1700000000,
            idempotency_key="import-42",
        )
    assert conflict.value.code == "idempotency_conflict"


def test_retries_a_read_whose_answer_was_cut(client: Client, proxy: CuttingProxy) -> None:
    ns = namespace(client, "read-cut")
    cuts = proxy.cuts
    proxy.cut(r"^GET /v1/namespaces/ns_", 1)
    assert client.namespaces.get(id=ns)["namespace"]["name"] == "read-cut"
    assert proxy.cuts == cuts + 1


def test_gives_up_on_a_cut_connection_when_retries_are_off(proxy: CuttingProxy, workspace: Workspace) -> None:
    with Client(proxy.url, token=workspace.owner.token, workspace_id=workspace.id, retry=False) as single:
        proxy.cut(r"^GET /v1/namespaces[ ?]", 1)
        with pytest.raises(TmsNetworkError) as failure:
            single.namespaces.list()
    assert (failure.value.operation, failure.value.attempts) == ("namespaces.list", 1)
    assert isinstance(failure.value.__cause__, httpx.TransportError)


def test_follows_the_cursor_through_every_page(client: Client, proxy: CuttingProxy) -> None:
    parent = namespace(client, "paged")
    children = {namespace(client, f"child-{i}", parent) for i in range(5)}
    before = len(proxy.heads(r"^GET /v1/namespaces\?"))
    seen = [item["id"] for item in client.paginate("namespaces.list", parent_id=parent, limit=2)]
    assert sorted(seen) == sorted(children)
    pages = proxy.heads(r"^GET /v1/namespaces\?")[before:]
    assert len(pages) == 3
    assert len([head for head in pages if "cursor=" in head]) == 2


def test_waits_out_rate_limited_honouring_retry_after(gateway: Gateway, proxy: CuttingProxy) -> None:
    person = gateway.person()
    events: list[RetryEvent] = []
    with Client(proxy.url, token=lambda: person.token, on_retry=events.append) as waiting:
        assert waiting.workspace_id is None
        for _ in range(3):
            assert waiting.me.get()["actor"]["id"] == person.actor_id
    limited = [e for e in events if isinstance(e.failure, AnswerFailure) and e.failure.error.code == "rate_limited"]
    assert limited
    for event in limited:
        assert isinstance(event.failure, AnswerFailure)
        seconds = event.failure.error.retry_after_seconds
        assert seconds is not None and seconds >= 1
        assert event.delay >= seconds

    # Without retries the refusal surfaces as a TmsError with the spec's fields.
    with Client(proxy.url, token=person.token, retry=False) as single:
        try:
            single.me.get()
        except TmsError:
            pass
        with pytest.raises(TmsError) as refused:
            single.me.get()
    error = refused.value
    assert (error.code, error.status, error.retryable, error.operation) == ("rate_limited", 429, True, "me.get")
    assert error.retry_after_seconds is not None and error.retry_after_seconds >= 1
    assert error.request_id


def test_retries_projection_pending_after_its_retry_after_then_gives_up(
    proxy: CuttingProxy, workspace: Workspace, client: Client
) -> None:
    ns = namespace(client, "pending")
    events: list[RetryEvent] = []
    with Client(
        proxy.url,
        token=workspace.owner.token,
        workspace_id=workspace.id,
        retry=RetryPolicy(max_attempts=2),
        on_retry=events.append,
    ) as bounded:
        with pytest.raises(TmsError) as refused:
            bounded.recall(
                namespace_ids=[ns],
                query="tea",
                budget={"max_context_chars": 100},
                min_sequence=1_000_000_000,
                on_pending="error",
            )
    error = refused.value
    assert (error.code, error.status, error.retryable) == ("projection_pending", 409, True)
    assert error.retry_after_seconds is not None and error.retry_after_seconds > 0
    assert [(event.operation, event.attempt) for event in events] == [("recall", 1)]
    assert events[0].delay >= error.retry_after_seconds


def test_raises_tms_error_with_the_body_fields_the_request_id_and_the_detail(
    client: Client, proxy: CuttingProxy, workspace: Workspace, events: list[RetryEvent]
) -> None:
    with pytest.raises(TmsError) as missing:
        client.memories.get(id="mem_nope", request_id="req-py-1")
    error = missing.value
    assert (error.code, error.status, error.retryable) == ("not_found", 404, False)
    assert (error.request_id, error.retry_after_seconds, error.detail) == ("req-py-1", None, None)
    assert error.message == "The resource was not found."
    assert error.operation == "memories.get"

    with pytest.raises(TmsError) as invalid:
        client.namespaces.create(parent_id=None, name="x" * 10_000, request_id="req-py-2")
    assert (invalid.value.code, invalid.value.status) == ("invalid_input", 400)
    # `detail` is the answer's X-Error-Detail header as the gateway sent it.
    answer = next(head for head in proxy.answer_heads() if header_of(head, "x-request-id") == "req-py-2")
    assert answer.startswith("HTTP/1.1 400 ")
    assert invalid.value.detail == header_of(answer, "x-error-detail")
    assert invalid.value.detail and "name" in invalid.value.detail

    with Client(proxy.url, workspace_id=workspace.id) as anonymous, pytest.raises(TmsError) as unauthenticated:
        anonymous.namespaces.list()
    assert (unauthenticated.value.code, unauthenticated.value.status) == ("unauthenticated", 401)

    # A non-retryable error is not retried.
    assert events == []


def test_bad_input_gets_the_services_error_never_a_client_side_change(client: Client, events: list[RetryEvent]) -> None:
    ns = namespace(client, "bad-input")
    with pytest.raises(TmsError) as kind:
        client.memories.create(namespace_id=ns, kind="fact", text="x", valid_from=1700000000)  # type: ignore[arg-type]
    assert kind.value.code == "invalid_input"
    assert kind.value.detail is not None and kind.value.detail.startswith(
        "body.kind: expected one of claim, episode, procedure"
    )
    # A time in milliseconds is out of range: refused by the service, not rescaled.
    with pytest.raises(TmsError) as milliseconds:
        client.memories.create(namespace_id=ns, kind="claim", text="x", valid_from=1700000000000)
    assert milliseconds.value.code == "invalid_input"
    assert milliseconds.value.detail is not None and milliseconds.value.detail.startswith("body.valid_from")
    # A field the operation does not have reaches the service, which names it.
    with pytest.raises(TmsError) as unknown:
        client.call("namespaces.get", {"id": ns, "colour": "red"})  # type: ignore[call-overload]
    assert unknown.value.code == "invalid_input"
    assert unknown.value.detail is not None and "colour" in unknown.value.detail
    # Unpaired surrogates are sent as they are (not UTF-8), and the service refuses them.
    with pytest.raises(TmsError) as surrogate:
        client.memories.create(namespace_id=ns, kind="claim", text="tea \ud800", valid_from=1700000000)
    assert surrogate.value.code == "invalid_input"
    # What was given is sent as given: an empty idempotency key is the service's to refuse.
    with pytest.raises(TmsError) as empty_key:
        client.memories.create(namespace_id=ns, kind="claim", text="x", valid_from=1700000000, idempotency_key="")
    assert empty_key.value.code == "invalid_input"
    assert empty_key.value.detail is not None and "Idempotency-Key" in empty_key.value.detail
    # A value no HTTP request can carry is refused before anything is sent, and not retried.
    with pytest.raises(httpx.LocalProtocolError):
        client.namespaces.get(id=ns, request_id="req\nsplit")
    assert events == []
    assert [item["memory"]["id"] for item in client.paginate("memories.list", namespace_id=ns)] == []


def test_recalls_once_the_index_has_caught_up_with_a_commit(client: Client) -> None:
    ns = namespace(client, "recall")
    created = client.memories.create(
        namespace_id=ns, kind="episode", text="Ana ordered mint tea at the cafe.", valid_from=1700000000
    )
    answer = client.recall_when_indexed(
        after=created["commit"], namespace_ids=[ns], query="mint tea", budget={"max_context_chars": 2000}
    )
    assert answer["status"] == "complete"
    assert answer["indexed_sequence"] >= created["commit"]["sequence"]
    assert [item["memory"]["id"] for item in answer["items"]] == [created["memory"]["id"]]
    # A bare sequence number works as well.
    again = client.recall_when_indexed(after=created["commit"]["sequence"], namespace_ids=(ns,), query="tea")
    assert [item["memory"]["id"] for item in again["items"]] == [created["memory"]["id"]]


def test_call_by_name_and_refusals_before_anything_is_sent(client: Client, proxy: CuttingProxy) -> None:
    ns = namespace(client, "by-name")
    assert client.call("namespaces.get", {"id": ns})["namespace"]["name"] == "by-name"
    before = len(proxy.heads())
    with pytest.raises(ValueError, match="unknown operation"):
        client.call("memories.explode", {})  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="takes no idempotency_key"):
        client.call("namespaces.get", {"id": ns}, idempotency_key="k")  # type: ignore[call-overload]
    # An empty id would address another route (`/v1/memories/` is the listing).
    with pytest.raises(ValueError, match="id must not be empty"):
        client.memories.get(id="")
    assert len(proxy.heads()) == before


def test_connects_on_the_first_call_only_and_closes_its_pool(proxy: CuttingProxy, workspace: Workspace) -> None:
    connections = proxy.connections
    client = Client(proxy.url, token=workspace.owner.token, workspace_id=workspace.id)
    bound = client.with_workspace(None)
    assert proxy.connections == connections
    with client:
        client.namespaces.list()
        assert proxy.connections == connections + 1
    with pytest.raises(RuntimeError):
        client.namespaces.list()
    # A client from with_workspace shares the pool it came from.
    with pytest.raises(RuntimeError):
        bound.me.get()
