"""The errors the client raises: `TmsError` for an answer, `TmsNetworkError` for no answer."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ._generated import ERROR_TABLE, ErrorCode


class TmsError(Exception):
    """A failure answered by the service (or, with code `unavailable` or `internal`, by what stands
    in front of it: a body that is not the service's error object)."""

    code: ErrorCode
    """One of the service's error codes (decisions.md §7), e.g. `not_found`."""
    message: str
    status: int
    """The HTTP status of the answer."""
    retryable: bool
    request_id: str | None
    """The answer's request id; None only when the answer did not come from the service."""
    retry_after_seconds: float | None
    detail: str | None
    """What was wrong, from the `X-Error-Detail` header (only `invalid_input` carries one)."""
    operation: str
    """The operation that failed, e.g. `memories.create`."""

    def __init__(
        self,
        operation: str,
        *,
        code: ErrorCode,
        message: str,
        status: int,
        retryable: bool,
        request_id: str | None,
        retry_after_seconds: float | None,
        detail: str | None,
    ) -> None:
        super().__init__(message)
        self.operation = operation
        self.code = code
        self.message = message
        self.status = status
        self.retryable = retryable
        self.request_id = request_id
        self.retry_after_seconds = retry_after_seconds
        self.detail = detail

    def __str__(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.operation}: {self.code} {self.status}: {self.message}{detail}"

    def __repr__(self) -> str:
        return (
            f"TmsError(operation={self.operation!r}, code={self.code!r}, status={self.status}, "
            f"request_id={self.request_id!r}, detail={self.detail!r})"
        )


class TmsNetworkError(Exception):
    """No answer came back on the last attempt: the connection was refused, reset or cut, or the
    attempt timed out. The cause (an `httpx.TransportError`) is `__cause__`."""

    operation: str
    attempts: int
    """Attempts made, the last one included."""

    def __init__(self, operation: str, attempts: int) -> None:
        super().__init__(f"{operation}: no answer from the service after {attempts} attempt(s)")
        self.operation = operation
        self.attempts = attempts


def _is_error_code(value: object) -> bool:
    return isinstance(value, str) and value in ERROR_TABLE


_SECONDS = re.compile(r"\d+")


def _retry_after_header(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after")
    if value is None or not _SECONDS.fullmatch(value.strip()):
        return None
    return float(value.strip())


def error_from_response(operation: str, status: int, headers: Mapping[str, str], text: str) -> TmsError:
    """The TmsError of a non-2xx answer. A body that is not the service's error object (a proxy or
    load balancer answered) becomes `unavailable` for 502/503/504, which a retry may cure, and
    `internal` otherwise. `headers` is looked up in lower case (httpx's headers ignore case)."""
    detail = headers.get("x-error-detail")
    header_request_id = headers.get("x-request-id")
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and _is_error_code(error.get("code")):
        code: ErrorCode = error["code"]
        message = error.get("message")
        request_id = error.get("request_id")
        retry_after = error.get("retry_after_seconds")
        return TmsError(
            operation,
            code=code,
            message=message if isinstance(message, str) else ERROR_TABLE[code].message,
            status=status,
            retryable=error.get("retryable") is True,
            request_id=request_id if isinstance(request_id, str) else header_request_id,
            retry_after_seconds=(
                float(retry_after)
                if isinstance(retry_after, (int, float)) and not isinstance(retry_after, bool)
                else _retry_after_header(headers)
            ),
            detail=detail,
        )
    fallback: ErrorCode = "unavailable" if status in (502, 503, 504) else "internal"
    return TmsError(
        operation,
        code=fallback,
        message=ERROR_TABLE[fallback].message,
        status=status,
        retryable=ERROR_TABLE[fallback].retryable,
        request_id=header_request_id,
        retry_after_seconds=_retry_after_header(headers),
        detail=detail,
    )
