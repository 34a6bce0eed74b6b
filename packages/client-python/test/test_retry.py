"""The retry decision, the backoff, the parsing of error answers and the splitting of fields into a
request, as pure functions. The gateway tests cover them end to end; these cover what a real
gateway cannot be made to produce: a write without an idempotency key (the catalog has none
today) and answers from something in front of the service."""

from __future__ import annotations

import json
import math
import time
from typing import get_args

import httpx
import pytest

from tms_client import (
    ERROR_TABLE,
    OPERATIONS,
    AnswerFailure,
    ErrorCode,
    NetworkFailure,
    RetryEvent,
    RetryPolicy,
    TmsError,
    TmsNetworkError,
)
from tms_client._base import OperationSpec
from tms_client._client import _request_of, _Settings
from tms_client._errors import error_from_response
from tms_client._retry import NO_RETRY, backoff, may_retry


def answer(code: ErrorCode, status: int, retryable: bool, retry_after: float | None = None) -> AnswerFailure:
    return AnswerFailure(
        TmsError(
            "test.op",
            code=code,
            message="m",
            status=status,
            retryable=retryable,
            request_id="req-1",
            retry_after_seconds=retry_after,
            detail=None,
        )
    )


def spec(idempotent: bool, mutates: bool) -> OperationSpec:
    return OperationSpec("POST", "/v1/x", (), (), True, idempotent, mutates, True, None)


NETWORK = NetworkFailure(httpx.ConnectError("refused"))
READ = spec(idempotent=False, mutates=False)
IDEMPOTENT_WRITE = spec(idempotent=True, mutates=True)
PLAIN_WRITE = spec(idempotent=False, mutates=True)


def test_retries_reads_and_idempotent_writes_after_a_network_failure_or_a_retryable_error() -> None:
    for op in (READ, IDEMPOTENT_WRITE):
        assert may_retry(op, NETWORK)
        assert may_retry(op, answer("unavailable", 503, True))
        assert may_retry(op, answer("projection_pending", 409, True))
        assert may_retry(op, answer("rate_limited", 429, True, 3))


def test_never_retries_an_error_the_service_marks_not_retryable() -> None:
    for op in (READ, IDEMPOTENT_WRITE, PLAIN_WRITE):
        assert not may_retry(op, answer("conflict", 409, False))
        assert not may_retry(op, answer("internal", 500, False))
        assert not may_retry(op, answer("invalid_input", 400, False))


def test_retries_a_write_without_a_key_only_after_rate_limited() -> None:
    assert not may_retry(PLAIN_WRITE, NETWORK)
    assert not may_retry(PLAIN_WRITE, answer("unavailable", 503, True))
    assert may_retry(PLAIN_WRITE, answer("rate_limited", 429, True, 1))


def test_backoff_draws_below_a_ceiling_that_doubles_and_stops_at_max_delay() -> None:
    policy = RetryPolicy(base_delay=0.1, max_delay=1.0)
    top = [backoff(policy, retry, NETWORK, lambda: 0.999999) for retry in range(1, 7)]
    assert [round(delay, 3) for delay in top] == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0]
    assert backoff(policy, 3, NETWORK, lambda: 0.0) == 0.0


def test_backoff_waits_at_least_retry_after_even_beyond_max_delay() -> None:
    policy = RetryPolicy(base_delay=0.1, max_delay=1.0)
    assert backoff(policy, 1, answer("rate_limited", 429, True, 2), lambda: 0.0) == 2
    assert backoff(policy, 1, answer("rate_limited", 429, True, 5), lambda: 0.5) == 5


def test_retry_policy_refuses_nonsense() -> None:
    assert NO_RETRY.max_attempts == 1
    for bad in ({"max_attempts": 0}, {"max_elapsed": -1.0}, {"base_delay": math.nan}, {"max_attempts": 1.5}):
        with pytest.raises(ValueError):
            RetryPolicy(**bad)


def error_body(code: str, status: int, retryable: bool, request_id: str) -> str:
    message = ERROR_TABLE[code].message  # type: ignore[index]
    error = {"code": code, "message": message, "status": status, "retryable": retryable}
    return json.dumps({"error": {**error, "request_id": request_id, "retry_after_seconds": None}})


def test_reads_the_error_body_and_takes_detail_from_x_error_detail() -> None:
    headers = httpx.Headers({"X-Error-Detail": "body.name: too long", "X-Request-Id": "req-9"})
    error = error_from_response("namespaces.create", 400, headers, error_body("invalid_input", 400, False, "req-9"))
    assert (error.code, error.status, error.retryable, error.request_id) == ("invalid_input", 400, False, "req-9")
    assert (error.detail, error.operation, error.message) == (
        "body.name: too long",
        "namespaces.create",
        "The request is invalid.",
    )
    assert str(error) == "namespaces.create: invalid_input 400: The request is invalid. (body.name: too long)"


def test_takes_retry_after_when_the_body_gives_none() -> None:
    body = error_body("unavailable", 503, True, "r")
    assert error_from_response("me.get", 503, httpx.Headers({"Retry-After": "7"}), body).retry_after_seconds == 7


def test_an_answer_that_is_not_the_services_becomes_unavailable_or_internal() -> None:
    gateway = error_from_response("me.get", 502, httpx.Headers(), "<html>Bad Gateway</html>")
    assert (gateway.code, gateway.status, gateway.retryable, gateway.request_id) == ("unavailable", 502, True, None)
    teapot = error_from_response("me.get", 418, httpx.Headers({"x-request-id": "r-2"}), "no")
    assert (teapot.code, teapot.status, teapot.retryable, teapot.request_id) == ("internal", 418, False, "r-2")


def test_the_error_table_has_every_code() -> None:
    assert sorted(ERROR_TABLE) == sorted(get_args(ErrorCode))
    assert ERROR_TABLE["rate_limited"].status == 429 and ERROR_TABLE["rate_limited"].retryable


def test_fields_go_to_the_path_the_query_and_the_body() -> None:
    get = _request_of(
        "memories.get",
        OPERATIONS["memories.get"],
        "http://h",
        {"id": "mem 1/2", "include_evidence": True, "as_of": 1.5},
    )
    assert (get.method, get.body) == ("GET", None)
    assert get.url == "http://h/v1/memories/mem%201%2F2?include_evidence=true&as_of=1.5"
    recall = _request_of(
        "recall", OPERATIONS["recall"], "http://h", {"namespace_ids": ("ns_1",), "query": "tea", "as_of": None}
    )
    assert recall.url == "http://h/v1/recall"
    assert recall.body is not None
    assert json.loads(recall.body) == {"namespace_ids": ["ns_1"], "query": "tea", "as_of": None}
    listing = _request_of(
        "memories.list", OPERATIONS["memories.list"], "http://h", {"namespace_id": "ns_1", "limit": 2}
    )
    assert listing.url == "http://h/v1/memories?namespace_id=ns_1&limit=2"
    for where in ("recall", "memories.list"):
        with pytest.raises(ValueError):
            _request_of(where, OPERATIONS[where], "http://h", {"namespace_id": "ns_1", "as_of": math.nan})


def test_gives_up_when_attempts_or_time_run_out_and_tells_each_retry() -> None:
    told: list[RetryEvent] = []
    settings = _Settings("http://h", None, RetryPolicy(max_attempts=3, base_delay=0.01, max_elapsed=1.0), told.append)
    spec = OPERATIONS["namespaces.get"]
    now = time.monotonic()
    assert 0 <= settings.next_delay("namespaces.get", spec, 1, NETWORK, now) < 0.01
    assert [(event.operation, event.attempt, event.failure) for event in told] == [("namespaces.get", 1, NETWORK)]
    with pytest.raises(TmsNetworkError) as exhausted:
        settings.next_delay("namespaces.get", spec, 3, NETWORK, now)
    assert exhausted.value.attempts == 3 and exhausted.value.__cause__ is NETWORK.cause
    # A retry whose wait would end after max_elapsed is not made: the last failure is raised.
    late = answer("rate_limited", 429, True, 5)
    with pytest.raises(TmsError) as refused:
        settings.next_delay("namespaces.get", spec, 1, late, now)
    assert refused.value is late.error
    with pytest.raises(TmsNetworkError):
        settings.next_delay("namespaces.get", spec, 1, NETWORK, now - 2.0)
    assert len(told) == 1
