"""When a failed attempt is repeated, and after how long."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TypeAlias

from ._base import OperationSpec
from ._errors import TmsError


@dataclass(frozen=True)
class RetryPolicy:
    """How hard the client tries before it gives up (every bound applies). Times in seconds."""

    max_attempts: int = 5
    """Attempts in all, the first included."""
    max_elapsed: float = 60.0
    """No retry starts later than this after the call began."""
    base_delay: float = 0.25
    """First backoff ceiling; it doubles with each retry."""
    max_delay: float = 10.0
    """Backoff ceiling (a `Retry-After` from the service may ask for more, and is honoured)."""
    attempt_timeout: float = 30.0
    """An attempt is abandoned (and counts as a network failure) when connecting, sending, or
    waiting for the next bytes of the answer takes longer than this."""

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"RetryPolicy.{field.name} must be a non-negative number")
        if not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ValueError("RetryPolicy.max_attempts must be an integer of at least 1")


NO_RETRY = RetryPolicy(max_attempts=1)
"""A single attempt (`retry=False`)."""


@dataclass(frozen=True)
class NetworkFailure:
    """No answer: the connection failed or was cut, or the attempt timed out. The request may have
    arrived."""

    cause: BaseException


@dataclass(frozen=True)
class AnswerFailure:
    """The service (or a proxy) answered with an error."""

    error: TmsError


AttemptFailure: TypeAlias = "NetworkFailure | AnswerFailure"


@dataclass(frozen=True)
class RetryEvent:
    """Told to `on_retry` before a retry waits (for logs and metrics)."""

    operation: str
    attempt: int
    """The attempt that failed (1 for the first)."""
    delay: float
    """Seconds the client waits before the next attempt."""
    failure: AttemptFailure


def may_retry(spec: OperationSpec, failure: AttemptFailure) -> bool:
    """Whether a failed attempt may be repeated. Reads and idempotent writes (whose key makes a
    repeat replay the first result) retry every retryable error and every network failure. A write
    without an idempotency key retries only `rate_limited`, which the service answers before
    executing anything: after any other failure the first attempt may have taken effect."""
    repeatable = spec.idempotent or not spec.mutates
    if isinstance(failure, NetworkFailure):
        return repeatable
    if not failure.error.retryable:
        return False
    return repeatable or failure.error.code == "rate_limited"


def backoff(policy: RetryPolicy, retry: int, failure: AttemptFailure, random: Callable[[], float]) -> float:
    """Seconds to wait before retry number `retry` (1 for the first): full jitter, a uniform draw
    below an exponentially growing ceiling, but never less than the service's `retry_after_seconds`."""
    ceiling = min(policy.max_delay, policy.base_delay * 2.0 ** (retry - 1))
    jitter = random() * ceiling
    retry_after = failure.error.retry_after_seconds if isinstance(failure, AnswerFailure) else None
    return jitter if retry_after is None else max(jitter, retry_after)
