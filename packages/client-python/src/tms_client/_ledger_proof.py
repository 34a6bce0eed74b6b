"""Reader side of the ledger's hash chain (docs/ledger-proofs.md). A proof from `ledger.proof` is
checked with SHA-256 alone (`hashlib`):

    h = SHA-256(previous_chain_hash ‖ SHA-256(digest_input))      (hashes as 32 raw bytes)
    h = SHA-256(h ‖ link)   for each link, in order
    h must equal head.chain_hash

and the digest input must name the subject at the proof's sequence. With the service's ledger keys
(`/.well-known/ledger-keys.json`) the head's Ed25519 signature is checked too, which needs the
`cryptography` package (`pip install 'tms-client[signatures]'`); without it, asking for a
signature check raises `SignatureCheckUnavailable` instead of skipping it. A head kept earlier
(`pinned_head`) must be the one the proof reaches.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class SignatureCheckUnavailable(RuntimeError):
    """An Ed25519 signature check was asked for, and the `cryptography` package is not installed."""


def signature_check_available() -> bool:
    """Whether Ed25519 signatures can be checked here (the `cryptography` package is installed)."""
    try:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class ProofVerdict:
    """Whether a proof holds: when it does, the subject's `record` from the digest input; when it
    does not, the `reason`. True in a boolean context exactly when valid."""

    valid: bool
    record: dict[str, Any] | None = None
    reason: str | None = None

    def __bool__(self) -> bool:
        return self.valid


_HEX64 = re.compile(r"[0-9a-f]{64}")


def _chain_step(previous: str, digest: str) -> str:
    """SHA-256(previous ‖ digest), both given and answered as hex."""
    return hashlib.sha256(bytes.fromhex(previous) + bytes.fromhex(digest)).hexdigest()


def _base64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _same_json(left: object, right: object) -> bool:
    # JSON equality of scalars: a boolean is never a number (True == 1 in Python).
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    return left == right


def verify_ledger_head(signed: Mapping[str, Any], jwks: Mapping[str, Any]) -> bool:
    """Whether `signed["signature"]` is a valid JWS (EdDSA) over exactly `signed["head"]` by one of
    the keys (`{"keys": [...]}`, as `/.well-known/ledger-keys.json` serves them). Raises
    `SignatureCheckUnavailable` when the `cryptography` package is not installed."""
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError as missing:
        raise SignatureCheckUnavailable(
            "checking the ledger head's Ed25519 signature needs the cryptography package: "
            "pip install 'tms-client[signatures]'"
        ) from missing
    signature = signed.get("signature")
    head = signed.get("head")
    if not isinstance(signature, str) or not isinstance(head, Mapping):
        return False
    parts = signature.split(".")
    if len(parts) != 3:
        return False
    header64, payload64, signature64 = parts
    try:
        header = json.loads(_base64url(header64))
        payload = json.loads(_base64url(payload64))
        raw_signature = _base64url(signature64)
    except (ValueError, binascii.Error):
        return False
    if not isinstance(header, dict) or not isinstance(payload, dict) or header.get("alg") != "EdDSA":
        return False
    keys = jwks.get("keys")
    candidates: Sequence[Any] = keys if isinstance(keys, list) else []
    jwk = next(
        (
            key
            for key in candidates
            if isinstance(key, Mapping)
            and key.get("kid") == header.get("kid")
            and key.get("kty") == "OKP"
            and key.get("crv") == "Ed25519"
        ),
        None,
    )
    if jwk is None or not isinstance(jwk.get("x"), str):
        return False
    if set(payload) != set(head) or not all(_same_json(payload[name], head[name]) for name in head):
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(_base64url(jwk["x"]))
        key.verify(raw_signature, f"{header64}.{payload64}".encode("ascii"))
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True


def verify_proof(
    proof: Mapping[str, Any],
    *,
    jwks: Mapping[str, Any] | None = None,
    pinned_head: Mapping[str, Any] | None = None,
) -> ProofVerdict:
    """Check a `ledger.proof` answer (see the module's text); never raises on a malformed proof.

    `jwks`: the service's ledger keys; when given, the head's signature must verify with one of
    them (raises `SignatureCheckUnavailable` without `cryptography`). `pinned_head`: a head kept
    earlier (`ledger.head()["head"]`); the proof must reach exactly this head."""

    def fail(reason: str) -> ProofVerdict:
        return ProofVerdict(valid=False, reason=reason)

    try:
        signed = proof["head"]
        head = signed["head"]
        previous = proof["previous_chain_hash"]
        links = proof["links"]
        sequence = proof["sequence"]
        digest_input = proof["digest_input"]
        chain_hash = head["chain_hash"]
        head_sequence = head["sequence"]
    except (KeyError, TypeError):
        return fail("malformed proof")
    if not isinstance(previous, str) or not isinstance(chain_hash, str):
        return fail("malformed hash")
    if not _HEX64.fullmatch(previous) or not _HEX64.fullmatch(chain_hash):
        return fail("malformed hash")
    if not isinstance(links, list) or not all(isinstance(link, str) and _HEX64.fullmatch(link) for link in links):
        return fail("malformed link")
    if not isinstance(sequence, int) or not isinstance(head_sequence, int) or not isinstance(digest_input, str):
        return fail("malformed proof")
    if head_sequence - sequence != len(links):
        return fail("the links do not span the proof to its head")
    try:
        parsed: Any = json.loads(digest_input)
    except ValueError:
        return fail("the digest input is not JSON")
    if not isinstance(parsed, dict):
        return fail("the digest input is not JSON")
    if not _same_json(parsed.get("sequence"), sequence):
        return fail("the digest input is of another commit")
    if parsed.get("workspace_id") != head.get("workspace_id"):
        return fail("the digest input is of another workspace")
    records = parsed.get("records")
    record = next(
        (
            r
            for r in (records if isinstance(records, list) else [])
            if isinstance(r, dict) and r.get("id") == proof.get("subject_id")
        ),
        None,
    )
    if record is None or record.get("missing"):
        return fail("the commit does not name the subject")

    try:
        digest = hashlib.sha256(digest_input.encode("utf-8")).hexdigest()
    except UnicodeEncodeError:
        return fail("the digest input is not UTF-8")
    value = _chain_step(previous, digest)
    for link in links:
        value = _chain_step(value, link)
    if value != chain_hash:
        return fail("the chain does not reach the head's chain hash")

    if jwks is not None and not verify_ledger_head(signed, jwks):
        return fail("the head's signature does not verify")
    if pinned_head is not None:
        if pinned_head.get("workspace_id") != head.get("workspace_id") or not _same_json(
            pinned_head.get("sequence"), head_sequence
        ):
            return fail("the proof ends at another head than the one kept")
        if pinned_head.get("chain_hash") != chain_hash or not _same_json(
            pinned_head.get("recorded_at"), head.get("recorded_at")
        ):
            return fail("the chain no longer matches the head kept")
    return ProofVerdict(valid=True, record=record)
