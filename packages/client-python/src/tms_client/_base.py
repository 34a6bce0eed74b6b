"""What the generated operation layer builds on: the sentinel of an argument not given, and the
shapes of the operation and error tables."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, TypeAlias, final


@final
class NotGiven:
    """The default of an optional argument: the field is left out of the request, so the service
    applies its own default. (`None` is sent, as JSON `null`.)"""

    _instance: NotGiven | None = None

    def __new__(cls) -> NotGiven:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN: Final = NotGiven()


def given(**fields: object) -> dict[str, object]:
    """The fields that were given (not `NOT_GIVEN`)."""
    return {name: value for name, value in fields.items() if value is not NOT_GIVEN}


SequenceRef: TypeAlias = "int | Mapping[str, Any]"
"""A commit (any dict with an integer `sequence`, as every write answers it) or a bare sequence number."""


def sequence_of(after: SequenceRef) -> int:
    """The sequence number of a commit or of a bare number."""
    value = after.get("sequence") if isinstance(after, Mapping) else after
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("after must be a commit (with an integer sequence) or a sequence number")
    return value


class ErrorInfo(NamedTuple):
    """HTTP status, retryability and default message of an error code."""

    status: int
    retryable: bool
    message: str


@dataclass(frozen=True)
class Pager:
    """How an answer pages: the query parameter that continues it, the answer's field with the next
    position (null, or unchanged for a feed that has caught up, at the end), and its items."""

    param: str
    next: str
    items: str


@dataclass(frozen=True)
class OperationSpec:
    """How to call one operation: the runtime dispatches on these alone."""

    method: str
    path: str
    path_params: tuple[str, ...]
    query: tuple[str, ...]
    body: bool
    idempotent: bool
    mutates: bool
    workspace: bool
    pager: Pager | None
