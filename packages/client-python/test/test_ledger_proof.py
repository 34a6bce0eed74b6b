"""`verify_proof` and `verify_ledger_head` on proofs and heads from a real gateway (on each driver),
and what a tampered proof, another key or a missing `cryptography` package give."""

from __future__ import annotations

import base64
import copy
import json
import subprocess
import sys
from typing import Any

import httpx
import pytest
from conftest import Gateway, Workspace

from tms_client import (
    Client,
    LedgerProofOutput,
    SignatureCheckUnavailable,
    signature_check_available,
    verify_ledger_head,
    verify_proof,
)


@pytest.fixture
def proven(gateway: Gateway, workspace: Workspace) -> tuple[Client, LedgerProofOutput, dict[str, Any]]:
    client = Client(gateway.url, token=workspace.owner.token, workspace_id=workspace.id)
    ns = client.namespaces.create(parent_id=None, name="proofs")["namespace"]["id"]
    created = client.memories.create(namespace_id=ns, kind="claim", text="Ana prefers tea.", valid_from=1700000000)
    # A later commit, so that the proof has a link to walk.
    client.memories.create(namespace_id=ns, kind="claim", text="Ana moved to Lisbon.", valid_from=1700000000)
    proof = client.ledger.proof(id=created["revision"]["id"])
    jwks = httpx.get(f"{gateway.url}/.well-known/ledger-keys.json").raise_for_status().json()
    return client, proof, jwks


def test_a_proof_from_the_service_holds_with_its_signature_and_the_head_kept(
    proven: tuple[Client, LedgerProofOutput, dict[str, Any]],
) -> None:
    client, proof, jwks = proven
    assert signature_check_available()
    assert len(proof["links"]) == 1
    kept = client.ledger.head()
    assert verify_ledger_head(kept, jwks) is True
    verdict = verify_proof(proof, jwks=jwks, pinned_head=kept["head"])
    assert verdict.valid and verdict.reason is None
    assert verdict.record is not None and verdict.record["id"] == proof["subject_id"]
    assert verdict.record["kind"] == "revision"
    client.close()


def test_a_tampered_proof_says_why_it_fails(proven: tuple[Client, LedgerProofOutput, dict[str, Any]]) -> None:
    client, proof, jwks = proven
    client.close()

    def changed(edit: Any) -> Any:
        altered = copy.deepcopy(proof)
        edit(altered)
        return altered

    def new_digest(p: Any) -> None:
        p["digest_input"] = p["digest_input"].replace('"sequence":', '"sequence": ', 1)

    def other_link(p: Any) -> None:
        p["links"][0] = "0" * 64

    def forged_head(p: Any) -> None:
        p["head"]["head"]["recorded_at"] += 1

    def short(p: Any) -> None:
        p["links"] = []

    def other_subject(p: Any) -> None:
        p["subject_id"] = "rev_other"

    assert verify_proof(changed(new_digest)).reason == "the chain does not reach the head's chain hash"
    assert verify_proof(changed(other_link)).reason == "the chain does not reach the head's chain hash"
    assert verify_proof(changed(short)).reason == "the links do not span the proof to its head"
    assert verify_proof(changed(other_subject)).reason == "the commit does not name the subject"
    # The chain still holds, but the signature covers the head as it was.
    assert verify_proof(changed(forged_head)).valid
    assert verify_proof(changed(forged_head), jwks=jwks).reason == "the head's signature does not verify"
    assert not verify_proof({"head": "nonsense"})

    pinned = dict(proof["head"]["head"], sequence=proof["head"]["head"]["sequence"] + 1)
    assert verify_proof(proof, pinned_head=pinned).reason == "the proof ends at another head than the one kept"


def test_a_head_signed_by_another_key_or_altered_does_not_verify(
    proven: tuple[Client, LedgerProofOutput, dict[str, Any]],
) -> None:
    client, proof, jwks = proven
    client.close()
    signed = proof["head"]
    assert verify_ledger_head(signed, jwks)
    other_key = base64.urlsafe_b64encode(bytes(32)).decode().rstrip("=")
    others = {"keys": [dict(key, x=other_key) for key in jwks["keys"]]}
    assert not verify_ledger_head(signed, others)
    assert not verify_ledger_head(signed, {"keys": []})
    altered = dict(signed, head=dict(signed["head"], sequence=signed["head"]["sequence"] + 1))
    assert not verify_ledger_head(altered, jwks)
    assert not verify_ledger_head(dict(signed, signature="a.b"), jwks)


def test_without_cryptography_a_signature_check_is_refused_not_skipped(
    proven: tuple[Client, LedgerProofOutput, dict[str, Any]],
) -> None:
    client, proof, jwks = proven
    client.close()
    # A fresh interpreter in which the cryptography package cannot be imported.
    program = """
import json, sys
sys.modules["cryptography"] = None
from tms_client import SignatureCheckUnavailable, signature_check_available, verify_ledger_head, verify_proof
proof, jwks = json.load(sys.stdin)
outcome = {"available": signature_check_available(), "chain": verify_proof(proof).valid}
try:
    verify_proof(proof, jwks=jwks)
    outcome["signature"] = "checked"
except SignatureCheckUnavailable as error:
    outcome["signature"] = str(error)
print(json.dumps(outcome))
"""
    run = subprocess.run(
        [sys.executable, "-c", program], input=json.dumps([proof, jwks]), capture_output=True, text=True, check=True
    )
    outcome = json.loads(run.stdout)
    assert outcome["available"] is False
    assert outcome["chain"] is True
    assert "pip install 'tms-client[signatures]'" in outcome["signature"]
    assert issubclass(SignatureCheckUnavailable, RuntimeError)
