"""`AsyncClient` against a real gateway on loopback (on each driver), through the cutting proxy."""

from __future__ import annotations

import asyncio

import pytest
from conftest import Workspace
from cutting_proxy import CuttingProxy, header_of

from tms_client import AsyncClient, NetworkFailure, RetryEvent, RetryPolicy, TmsError, TmsNetworkError

FAST = RetryPolicy(base_delay=0.01, max_delay=0.05)

pytestmark = pytest.mark.asyncio(loop_scope="session")


def connect(proxy: CuttingProxy, workspace: Workspace, events: list[RetryEvent] | None = None) -> AsyncClient:
    async def token() -> str:
        await asyncio.sleep(0)
        return workspace.owner.token

    return AsyncClient(
        proxy.url,
        token=token,
        workspace_id=workspace.id,
        retry=FAST,
        on_retry=events.append if events is not None else None,
    )


async def test_writes_recalls_and_pages_with_the_bound_workspace(proxy: CuttingProxy, workspace: Workspace) -> None:
    async with connect(proxy, workspace) as client:
        parent = (await client.namespaces.create(parent_id=None, name="async"))["namespace"]["id"]
        children = [
            (await client.namespaces.create(parent_id=parent, name=f"child-{i}"))["namespace"]["id"] for i in range(3)
        ]
        created = await client.memories.create(
            namespace_id=parent, kind="episode", text="Ana ordered mint tea at the cafe.", valid_from=1700000000
        )
        answer = await client.recall_when_indexed(
            after=created["commit"], namespace_ids=[parent], query="mint tea", include_descendants=False
        )
        assert answer["status"] == "complete"
        assert [item["memory"]["id"] for item in answer["items"]] == [created["memory"]["id"]]

        seen = [ns["id"] async for ns in client.paginate("namespaces.list", parent_id=parent, limit=2)]
        assert sorted(seen) == sorted(children)

        [post] = proxy.heads(r"^POST /v1/memories ")[-1:]
        assert header_of(post, "x-service-workspace") == workspace.id
        assert header_of(post, "authorization") == f"Bearer {workspace.owner.token}"

        elsewhere = client.with_workspace(None)
        assert elsewhere.workspace_id is None
        with pytest.raises(TmsError) as unselected:
            await elsewhere.namespaces.get(id=parent)
        assert unselected.value.code == "invalid_input"
        assert unselected.value.detail is not None and "X-Service-Workspace" in unselected.value.detail


async def test_retries_a_cut_write_with_the_same_key_and_it_commits_once(
    proxy: CuttingProxy, workspace: Workspace
) -> None:
    events: list[RetryEvent] = []
    async with connect(proxy, workspace, events) as client:
        ns = (await client.namespaces.create(parent_id=None, name="async-cut"))["namespace"]["id"]
        before = len(proxy.heads(r"^POST /v1/memories "))
        proxy.cut(r"^POST /v1/memories ", 1)
        created = await client.memories.create(
            namespace_id=ns, kind="claim", text="Ana prefers tea.", valid_from=1700000000
        )
        assert [(e.operation, type(e.failure)) for e in events] == [("memories.create", NetworkFailure)]
        posts = proxy.heads(r"^POST /v1/memories ")[before:]
        assert len(posts) == 2
        assert header_of(posts[0], "idempotency-key") == header_of(posts[1], "idempotency-key")
        listed = [item["memory"]["id"] async for item in client.paginate("memories.list", namespace_id=ns)]
        assert listed == [created["memory"]["id"]]


async def test_gives_up_with_a_network_error_and_answers_errors_with_their_detail(
    proxy: CuttingProxy, workspace: Workspace
) -> None:
    async with AsyncClient(proxy.url, token=workspace.owner.token, workspace_id=workspace.id, retry=False) as single:
        proxy.cut(r"^GET /v1/namespaces[ ?]", 1)
        with pytest.raises(TmsNetworkError) as failure:
            await single.namespaces.list()
        assert failure.value.attempts == 1
        with pytest.raises(TmsError) as invalid:
            await single.recall(namespace_ids=[], query="tea")
        assert invalid.value.code == "invalid_input"
        assert invalid.value.detail is not None and invalid.value.detail.startswith("body.namespace_ids")


async def test_connects_on_the_first_call_only_and_closes_its_pool(proxy: CuttingProxy, workspace: Workspace) -> None:
    connections = proxy.connections
    client = AsyncClient(proxy.url, token=workspace.owner.token, workspace_id=workspace.id)
    assert proxy.connections == connections
    async with client:
        await client.namespaces.list()
        assert proxy.connections == connections + 1
    with pytest.raises(RuntimeError):
        await client.namespaces.list()
