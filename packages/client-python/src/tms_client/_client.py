"""`Client` and `AsyncClient`: the runtime under the generated operation layer."""

from __future__ import annotations

import asyncio
import inspect
import json
import random
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeAlias
from urllib.parse import quote, urlencode

import httpx

from ._base import OperationSpec, SequenceRef, sequence_of
from ._errors import TmsError, TmsNetworkError, error_from_response
from ._generated import OPERATIONS, AsyncOperations, OperationName, Operations, PagedOperationName
from ._retry import (
    NO_RETRY,
    AnswerFailure,
    AttemptFailure,
    NetworkFailure,
    RetryEvent,
    RetryPolicy,
    backoff,
    may_retry,
)

RECALL_MAX_WAIT_MS = 10_000
"""The longest `wait_ms` recall accepts (decisions.md §5)."""

TokenSource: TypeAlias = "str | Callable[[], str] | None"
AsyncTokenSource: TypeAlias = "str | Callable[[], str | Awaitable[str]] | None"


def new_idempotency_key() -> str:
    """`tms-` and 128 random bits as hex: within the key format `[A-Za-z0-9][A-Za-z0-9._:-]*`."""
    return f"tms-{secrets.token_hex(16)}"


def _json_default(value: object) -> object:
    # A tuple or any other sequence given for an array argument goes out as a JSON array.
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def _query_value(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, allow_nan=False, default=_json_default)


@dataclass(frozen=True)
class _Request:
    method: str
    url: str
    body: bytes | None


def _request_of(operation: str, spec: OperationSpec, base_url: str, fields: Mapping[str, object]) -> _Request:
    """Split the fields into the URL and the body: path parameters fill the path, declared query
    parameters the query string, and every other field goes to the body (or, without one, to the
    query string, where the service refuses an unknown name as `invalid_input`)."""
    path = spec.path
    for param in spec.path_params:
        value = fields.get(param)
        if not isinstance(value, str):
            raise TypeError(f"{operation}: {param} must be a string")
        if value == "":
            # An empty segment would address another route (`/v1/memories/` is the listing).
            raise ValueError(f"{operation}: {param} must not be empty")
        path = path.replace("{" + param + "}", quote(value, safe=""))
    query: list[tuple[str, str]] = []
    body: dict[str, object] = {}
    for name, value in fields.items():
        if name in spec.path_params:
            continue
        if spec.body and name not in spec.query:
            body[name] = value
        elif isinstance(value, (list, tuple)):
            query.extend((name, _query_value(item)) for item in value)
        else:
            query.append((name, _query_value(value)))
    search = urlencode(query)
    # Bad text (a lone surrogate) goes out as bytes that are not UTF-8, so the service answers it
    # as `invalid_input` instead of the client failing on its own terms; NaN has no JSON at all.
    content = (
        json.dumps(body, ensure_ascii=False, allow_nan=False, default=_json_default).encode("utf-8", "surrogatepass")
        if spec.body
        else None
    )
    return _Request(spec.method, f"{base_url}{path}{'?' + search if search else ''}", content)


class _Settings:
    """What a client is configured with, shared by both flavours and by `with_workspace` copies."""

    def __init__(
        self,
        base_url: str,
        workspace_id: str | None,
        retry: RetryPolicy | bool | None,
        on_retry: Callable[[RetryEvent], None] | None,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError("base_url must be an http:// or https:// URL")
        if retry is False:
            policy = NO_RETRY
        elif retry is True or retry is None:
            policy = RetryPolicy()
        elif isinstance(retry, RetryPolicy):
            policy = retry
        else:
            raise TypeError("retry must be a RetryPolicy, True or False")
        self.base_url = base_url.rstrip("/")
        self.workspace_id = workspace_id
        self.policy = policy
        self.on_retry = on_retry

    def headers(
        self, spec: OperationSpec, token: str | None, request: _Request, key: str | None, request_id: str | None
    ) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        if request.body is not None:
            headers["Content-Type"] = "application/json"
        # What was given is sent as given (an empty value too), so the service judges it.
        if spec.workspace and self.workspace_id is not None:
            headers["X-Service-Workspace"] = self.workspace_id
        if key is not None:
            headers["Idempotency-Key"] = key
        if request_id is not None:
            headers["X-Request-Id"] = request_id
        return headers

    def prepare(
        self, operation: OperationName, fields: Mapping[str, object], idempotency_key: str | None
    ) -> tuple[OperationSpec, _Request, str | None]:
        spec = OPERATIONS.get(operation)
        if spec is None:
            raise ValueError(f"unknown operation {operation!r}")
        request = _request_of(operation, spec, self.base_url, fields)
        # One key for the whole call: every retry presents it, so the service executes the write once.
        key = (new_idempotency_key() if idempotency_key is None else idempotency_key) if spec.idempotent else None
        return spec, request, key

    def outcome(self, operation: str, response: httpx.Response) -> Any:
        if 200 <= response.status_code < 300:
            return response.json()
        raise error_from_response(operation, response.status_code, response.headers, response.text)

    def next_delay(
        self, operation: str, spec: OperationSpec, attempt: int, failure: AttemptFailure, started: float
    ) -> float:
        """Seconds to wait before the next attempt, or raise the failure when no retry is left."""
        policy = self.policy
        give_up = attempt >= policy.max_attempts or not may_retry(spec, failure)
        delay = 0.0 if give_up else backoff(policy, attempt, failure, random.random)
        if give_up or time.monotonic() - started + delay > policy.max_elapsed:
            if isinstance(failure, AnswerFailure):
                raise failure.error
            raise TmsNetworkError(operation, attempt) from failure.cause
        if self.on_retry is not None:
            self.on_retry(RetryEvent(operation=operation, attempt=attempt, delay=delay, failure=failure))
        return delay


def _recall_fields(fields: Mapping[str, object], sequence: int, remaining: float) -> dict[str, object]:
    return {**fields, "min_sequence": sequence, "wait_ms": min(RECALL_MAX_WAIT_MS, int(remaining * 1000))}


def _at(fields: Mapping[str, object], param: str, position: object) -> dict[str, object]:
    """The fields with the page position set (left out before the first page when none was given)."""
    out = {name: value for name, value in fields.items() if name != param}
    if position is not None:
        out[param] = position
    return out


def _following(page: Mapping[str, Any], next_field: str, position: object) -> object:
    """The position of the next page, or None at the end: lists end on a null cursor, and a feed
    that has caught up answers the position it was given."""
    following = page.get(next_field)
    return None if following is None or following == position else following


class _Common:
    """What both flavours hold and show: the settings, the token source and the pool."""

    _settings: _Settings
    _token: object
    _http: object

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    @property
    def workspace_id(self) -> str | None:
        """The bound workspace, or None."""
        return self._settings.workspace_id

    def _rebound(self, workspace_id: str | None) -> dict[str, Any]:
        """The constructor's keyword arguments for the same client bound to `workspace_id`, on this pool."""
        settings = self._settings
        return {
            "token": self._token,
            "workspace_id": workspace_id,
            "retry": settings.policy,
            "on_retry": settings.on_retry,
            "http_client": self._http,
        }

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, workspace_id={self.workspace_id!r})"


class Client(_Common, Operations):
    """A synchronous client for the `/v1` API, on one `httpx.Client` connection pool.

    `Client(base_url, token=..., workspace_id=None)`: `token` is a bearer token (session, OAuth
    access token, installation credential or service key) or a function returning one, called
    before every attempt. The bound workspace is sent as `X-Service-Workspace` to the operations
    that take one; `with_workspace(id)` gives the same client bound to another. Nothing touches the
    network until the first call. Use it as a context manager, or call `close()`, to close the pool.
    """

    _token: TokenSource
    _http: httpx.Client

    def __init__(
        self,
        base_url: str,
        *,
        token: TokenSource = None,
        workspace_id: str | None = None,
        retry: RetryPolicy | bool = True,
        on_retry: Callable[[RetryEvent], None] | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        """`retry`: a `RetryPolicy`, True for the default one, False for a single attempt.
        `on_retry` is told before each retry waits. `http_client`: an `httpx.Client` of your own
        (proxies, certificates, transports); the client then leaves closing it to you."""
        super().__init__()
        self._settings = _Settings(base_url, workspace_id, retry, on_retry)
        self._token = token
        self._http = http_client if http_client is not None else httpx.Client(follow_redirects=False)
        self._owns_http = http_client is None

    def with_workspace(self, workspace_id: str | None) -> Client:
        """The same client bound to another workspace (or to none). It shares this client's
        connection pool, which stays this client's to close."""
        return Client(self.base_url, **self._rebound(workspace_id))

    def close(self) -> None:
        """Close the connection pool (unless it was given as `http_client`)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _token_now(self) -> str | None:
        return self._token() if callable(self._token) else self._token

    def _call(
        self,
        operation: OperationName,
        fields: Mapping[str, object],
        *,
        idempotency_key: str | None,
        request_id: str | None,
    ) -> Any:
        settings = self._settings
        spec, request, key = settings.prepare(operation, fields, idempotency_key)
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            failure: AttemptFailure
            try:
                headers = settings.headers(spec, self._token_now(), request, key, request_id)
                # Not streamed: the whole answer is read within the attempt, so a connection cut
                # mid-answer is a network failure like any other.
                response = self._http.request(
                    request.method,
                    request.url,
                    content=request.body,
                    headers=headers,
                    timeout=settings.policy.attempt_timeout,
                )
                return settings.outcome(operation, response)
            except httpx.LocalProtocolError:
                raise  # what was given cannot be sent at all (a line break in a header): not a network failure
            except httpx.TransportError as cause:
                failure = NetworkFailure(cause)
            except TmsError as error:
                failure = AnswerFailure(error)
            time.sleep(settings.next_delay(operation, spec, attempt, failure, started))

    def _paginate(
        self, operation: PagedOperationName, fields: Mapping[str, object], *, request_id: str | None
    ) -> Iterator[Any]:
        pager = OPERATIONS[operation].pager
        if pager is None:
            raise ValueError(f"{operation} does not page")
        position = fields.get(pager.param)
        while True:
            page = self._call(
                operation, _at(fields, pager.param, position), idempotency_key=None, request_id=request_id
            )
            yield from page[pager.items]
            position = _following(page, pager.next, position)
            if position is None:
                return

    def _recall_when_indexed(
        self, fields: Mapping[str, object], *, after: SequenceRef, timeout: float, request_id: str | None
    ) -> Any:
        sequence = sequence_of(after)
        deadline = time.monotonic() + timeout
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            answer = self._call(
                "recall", _recall_fields(fields, sequence, remaining), idempotency_key=None, request_id=request_id
            )
            if answer.get("status") != "pending" or remaining == 0:
                return answer


class AsyncClient(_Common, AsyncOperations):
    """An asyncio client for the `/v1` API, on one `httpx.AsyncClient` connection pool: the same
    options and behaviour as `Client`, with `await` on every operation, `async for` over
    `paginate(...)`, and `async with` (or `aclose()`) to close the pool. `token` may also be an
    async function."""

    _token: AsyncTokenSource
    _http: httpx.AsyncClient

    def __init__(
        self,
        base_url: str,
        *,
        token: AsyncTokenSource = None,
        workspace_id: str | None = None,
        retry: RetryPolicy | bool = True,
        on_retry: Callable[[RetryEvent], None] | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__()
        self._settings = _Settings(base_url, workspace_id, retry, on_retry)
        self._token = token
        self._http = http_client if http_client is not None else httpx.AsyncClient(follow_redirects=False)
        self._owns_http = http_client is None

    def with_workspace(self, workspace_id: str | None) -> AsyncClient:
        """The same client bound to another workspace (or to none). It shares this client's
        connection pool, which stays this client's to close."""
        return AsyncClient(self.base_url, **self._rebound(workspace_id))

    async def aclose(self) -> None:
        """Close the connection pool (unless it was given as `http_client`)."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.aclose()

    async def _token_now(self) -> str | None:
        if not callable(self._token):
            return self._token
        token = self._token()
        return await token if inspect.isawaitable(token) else token

    async def _call(
        self,
        operation: OperationName,
        fields: Mapping[str, object],
        *,
        idempotency_key: str | None,
        request_id: str | None,
    ) -> Any:
        settings = self._settings
        spec, request, key = settings.prepare(operation, fields, idempotency_key)
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            failure: AttemptFailure
            try:
                headers = settings.headers(spec, await self._token_now(), request, key, request_id)
                response = await self._http.request(
                    request.method,
                    request.url,
                    content=request.body,
                    headers=headers,
                    timeout=settings.policy.attempt_timeout,
                )
                return settings.outcome(operation, response)
            except httpx.LocalProtocolError:
                raise  # what was given cannot be sent at all (a line break in a header): not a network failure
            except httpx.TransportError as cause:
                failure = NetworkFailure(cause)
            except TmsError as error:
                failure = AnswerFailure(error)
            await asyncio.sleep(settings.next_delay(operation, spec, attempt, failure, started))

    async def _paginate(
        self, operation: PagedOperationName, fields: Mapping[str, object], *, request_id: str | None
    ) -> AsyncIterator[Any]:
        pager = OPERATIONS[operation].pager
        if pager is None:
            raise ValueError(f"{operation} does not page")
        position = fields.get(pager.param)
        while True:
            page = await self._call(
                operation, _at(fields, pager.param, position), idempotency_key=None, request_id=request_id
            )
            for item in page[pager.items]:
                yield item
            position = _following(page, pager.next, position)
            if position is None:
                return

    async def _recall_when_indexed(
        self, fields: Mapping[str, object], *, after: SequenceRef, timeout: float, request_id: str | None
    ) -> Any:
        sequence = sequence_of(after)
        deadline = time.monotonic() + timeout
        while True:
            remaining = max(0.0, deadline - time.monotonic())
            answer = await self._call(
                "recall", _recall_fields(fields, sequence, remaining), idempotency_key=None, request_id=request_id
            )
            if answer.get("status") != "pending" or remaining == 0:
                return answer
