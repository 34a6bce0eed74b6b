"""A Python client for the `/v1` REST API of the Temporal Memory Service.

`Client` (synchronous) and `AsyncClient` (asyncio) on httpx, with one method per operation of the
catalog (`client.memories.create(...)`, `client.recall(...)`), keyword arguments named as the API
names them, and answers as typed dicts (every TypedDict is importable from here).
"""

from . import _generated
from ._base import NOT_GIVEN, NotGiven, SequenceRef
from ._client import AsyncClient, Client
from ._errors import TmsError, TmsNetworkError
from ._generated import *  # noqa: F403 (the types, ERROR_TABLE and OPERATIONS; its __all__ lists them)
from ._ledger_proof import (
    ProofVerdict,
    SignatureCheckUnavailable,
    signature_check_available,
    verify_ledger_head,
    verify_proof,
)
from ._retry import AnswerFailure, AttemptFailure, NetworkFailure, RetryEvent, RetryPolicy
from ._version import __version__

__all__ = [
    "NOT_GIVEN",
    "AnswerFailure",
    "AsyncClient",
    "AttemptFailure",
    "Client",
    "NetworkFailure",
    "NotGiven",
    "ProofVerdict",
    "RetryEvent",
    "RetryPolicy",
    "SequenceRef",
    "SignatureCheckUnavailable",
    "TmsError",
    "TmsNetworkError",
    "__version__",
    "signature_check_available",
    "verify_ledger_head",
    "verify_proof",
]
__all__ += _generated.__all__
