"""The live service for the suite: `gateway.ts` (beside this file) started once with Node, a real
gateway per driver (embedded PGlite and a fresh Postgres database, `TMS_TEST_DRIVERS` to choose),
and the fixtures that reach it. Tests that take `gateway` run once per driver."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from cutting_proxy import CuttingProxy

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
DRIVERS = [driver for driver in os.environ.get("TMS_TEST_DRIVERS", "pglite,postgres").split(",") if driver]


@dataclass(frozen=True)
class Person:
    """A fresh enrolled person: may create workspaces."""

    subject: str
    actor_id: str
    token: str


@dataclass(frozen=True)
class Gateway:
    driver: str
    url: str
    control: str

    def person(self) -> Person:
        answer = httpx.post(f"{self.control}/human", timeout=30).raise_for_status().json()
        return Person(subject=answer["subject"], actor_id=answer["actor_id"], token=answer["token"])


@dataclass(frozen=True)
class Workspace:
    """A fresh workspace and its owner (a workspace admin)."""

    id: str
    owner: Person


def _start_gateways() -> tuple[subprocess.Popen[str], dict[str, Any]]:
    node = os.environ.get("TMS_NODE") or shutil.which("node")
    if node is None:
        raise RuntimeError("the suite starts the gateway with Node.js: put node on the PATH (or set TMS_NODE)")
    child = subprocess.Popen(
        [node, "--import", "tsx", str(HERE / "gateway.ts"), *DRIVERS],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stderr is not None
    errors: list[str] = []
    # Drain stderr so that a chatty gateway never blocks on a full pipe.
    threading.Thread(target=lambda: errors.extend(child.stderr or []), daemon=True).start()
    line = child.stdout.readline()
    if not line:
        child.wait(timeout=30)
        raise RuntimeError(f"gateway.ts exited with {child.returncode}: {''.join(errors)[-4000:]}")
    return child, json.loads(line)


@pytest.fixture(scope="session")
def gateways() -> Iterator[dict[str, Any]]:
    child, started = _start_gateways()
    try:
        yield started
    finally:
        assert child.stdin is not None
        child.stdin.close()  # gateway.ts closes its gateways and exits when its stdin ends
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


@pytest.fixture(scope="session", params=DRIVERS)
def gateway(request: pytest.FixtureRequest, gateways: dict[str, Any]) -> Gateway:
    driver: str = request.param
    return Gateway(driver=driver, url=gateways[driver]["url"], control=gateways[driver]["control"])


@pytest.fixture(scope="session")
def proxy(gateway: Gateway) -> Iterator[CuttingProxy]:
    """A TCP proxy in front of the gateway that records what was sent and can cut an answer."""
    cutting = CuttingProxy(gateway.url)
    try:
        yield cutting
    finally:
        cutting.close()


@pytest.fixture
def workspace(gateway: Gateway) -> Workspace:
    owner = gateway.person()
    answer = httpx.post(
        f"{gateway.url}/v1/workspaces",
        json={"name": "py-suite"},
        headers={"Authorization": f"Bearer {owner.token}", "Idempotency-Key": os.urandom(8).hex()},
        timeout=30,
    ).raise_for_status()
    return Workspace(id=answer.json()["workspace"]["id"], owner=owner)
