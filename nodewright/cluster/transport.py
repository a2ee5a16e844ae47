"""How live reads talk to the API server: timeouts, an overall deadline, bounded retries.

Behaves as client-go and kubectl do, through the transport the kubernetes client already uses
(urllib3): each request has a connect and a read timeout (``--request-timeout``), the whole read an
overall deadline (``--timeout``); 429, 5xx and connection resets are retried with exponential backoff
by :class:`urllib3.util.Retry` (``--retries`` attempts at most), honouring ``Retry-After`` (capped by
the deadline). A timeout is not retried: a silent server is given up on after one request timeout.
Every failure becomes one :class:`~nodewright.errors.InputError` naming the server and the kind.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Final

from urllib3.exceptions import (
    HTTPError,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    ResponseError,
)
from urllib3.exceptions import TimeoutError as TransportTimeout
from urllib3.util.retry import Retry

from nodewright.errors import InputError, clip

DEFAULT_REQUEST_TIMEOUT: Final = 30.0
"""Seconds to connect, and between bytes of a response (client-go's HTTP/2 health check: 30 s + 15 s)."""
DEFAULT_TIMEOUT: Final = 300.0
"""Seconds for the whole read (every kind, every page, every retry)."""
DEFAULT_RETRIES: Final = 4
MAX_PAGE_BYTES: Final = 512 * 1024 * 1024
RETRY_STATUSES: Final = frozenset({429, 500, 502, 503, 504})
CHUNK: Final = 1 << 16


@dataclass(frozen=True, kw_only=True)
class Limits:
    """Bounds on a live read (the ``cluster snapshot`` flags; the live loader's defaults)."""

    request_timeout: float = DEFAULT_REQUEST_TIMEOUT
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    max_page_bytes: int = MAX_PAGE_BYTES


class Deadline:
    """The monotonic time by which the whole read must be done."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return self.end - time.monotonic()


class DeadlineRetry(Retry):
    """urllib3's retry policy, bounded by the read's deadline; timeouts are not retried."""

    deadline: float = float("inf")  # time.monotonic() after which nothing is retried

    def new(self, **kw: Any) -> DeadlineRetry:
        out = super().new(**kw)
        out.deadline = self.deadline
        return out

    def _cap(self, seconds: float) -> float:
        return max(0.0, min(seconds, self.deadline - time.monotonic()))

    def get_backoff_time(self) -> float:
        return self._cap(super().get_backoff_time())

    def get_retry_after(self, response: Any) -> float | None:
        value = super().get_retry_after(response)
        return None if value is None else self._cap(value)

    def is_exhausted(self) -> bool:
        return super().is_exhausted() or time.monotonic() >= self.deadline

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: Any = None,
    ) -> DeadlineRetry:
        if isinstance(error, TransportTimeout):  # silence (or no route) does not improve on retry
            raise MaxRetryError(_pool, url or "", error) from error
        return super().increment(method, url, response, error, _pool, _stacktrace)


def retry_policy(limits: Limits, deadline: Deadline) -> DeadlineRetry:
    retry = DeadlineRetry(
        total=limits.retries,
        connect=0,
        read=limits.retries,
        status=limits.retries,
        other=0,
        redirect=3,
        backoff_factor=0.5,
        backoff_max=10,
        backoff_jitter=0.25,
        status_forcelist=RETRY_STATUSES,
        allowed_methods=frozenset({"GET"}),
        respect_retry_after_header=True,
        raise_on_status=False,  # the last response becomes the error, with its status
    )
    retry.deadline = deadline.end
    return retry


@dataclass(frozen=True, kw_only=True)
class Target:
    """What one request reads, for its errors: the server, the kind, its group/resource."""

    server: str
    kind: str
    group: str
    resource: str

    def error(self, message: str, *, path: str = "") -> InputError:
        return InputError(message, file=f"{self.server} {self.kind}", path=path)

    def rbac_rule(self, verb: str = "list") -> str:
        return f'apiGroups: ["{self.group}"], resources: ["{self.resource}"], verbs: ["{verb}"]'


class HTTPStatusError(Exception):
    """A non-2xx answer, kept apart so the caller may act on it (404: not served; 410: relist)."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"HTTP {status} {reason}")
        self.status = status
        self.reason = reason
        self.message = message


def _status_message(body: Any) -> str:
    """The API server's own message of a ``Status`` body (never an HTML page echoed)."""
    try:
        doc = json.loads(body)
    except (TypeError, ValueError):
        return ""
    if isinstance(doc, dict) and doc.get("kind") == "Status" and isinstance(doc.get("message"), str):
        return clip(doc["message"], 200)
    return ""


def get_json(api: Any, path: str, query: list[tuple[str, Any]], *, target: Target, limits: Limits,
             deadline: Deadline) -> Any:  # fmt: skip
    """The decoded JSON body of ``GET path?query``; a non-2xx answer is :class:`HTTPStatusError`."""
    from kubernetes.client.exceptions import ApiException

    base: Retry | None = api.configuration.retries
    retry = base.new() if isinstance(base, Retry) else retry_policy(limits, deadline)
    while True:
        remaining = deadline.remaining()
        if remaining <= 0:
            raise _deadline_error(target, deadline)
        timeout = min(limits.request_timeout, remaining)
        try:
            resp = api.call_api(
                path,
                "GET",
                query_params=query,
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
                _preload_content=False,
                _return_http_data_only=True,
                _request_timeout=(timeout, timeout),
            )
            data = _read_body(resp, target=target, limits=limits, deadline=deadline)
        except ApiException as exc:
            if exc.status == 0:  # the client's own wrapping of TLS errors
                raise target.error(
                    f"TLS error talking to the API server: {clip(str(exc.reason), 200)}"
                ) from exc
            if exc.status in RETRY_STATUSES and deadline.remaining() <= 0:  # retries ended by the deadline
                raise _deadline_error(target, deadline) from exc
            raise HTTPStatusError(int(exc.status), str(exc.reason or ""), _status_message(exc.body)) from exc
        except (ProtocolError, ReadTimeoutError) as exc:  # while reading the body: retry the request
            try:
                retry = retry.increment("GET", path, error=exc)
            except MaxRetryError as final:
                if deadline.remaining() <= 0:
                    raise _deadline_error(target, deadline) from exc
                raise _transport_error(final, target, limits) from exc
            retry.sleep()
            continue
        except MaxRetryError as exc:
            if deadline.remaining() <= 0:
                raise _deadline_error(target, deadline) from exc
            raise _transport_error(exc, target, limits) from exc
        except (OSError, HTTPError) as exc:
            raise target.error(f"cannot reach the API server: {clip(str(exc), 200)}") from exc
        return _decode(data, resp, target)


def _read_body(resp: Any, *, target: Target, limits: Limits, deadline: Deadline) -> bytes:
    """The body, read in chunks under the deadline and a size bound (a slow drip is not a way around them)."""
    chunks: list[bytes] = []
    size = 0
    try:
        for chunk in resp.stream(CHUNK):
            size += len(chunk)
            if size > limits.max_page_bytes:
                raise target.error(
                    f"a response page exceeds {limits.max_page_bytes} bytes; lower --page-size"
                )
            if deadline.remaining() <= 0:
                raise _deadline_error(target, deadline)
            chunks.append(chunk)
    finally:
        resp.release_conn()
    return b"".join(chunks)


def _decode(data: bytes, resp: Any, target: Target) -> Any:
    try:
        return json.loads(data)
    except RecursionError as exc:
        raise target.error("the API server's response is JSON nested too deeply to read") from exc
    except ValueError as exc:
        ctype = str(resp.headers.get("Content-Type") or "no content type")
        if data.lstrip()[:1] in (b"<", b"") or "html" in ctype:
            what = (
                "an empty body"
                if not data.strip()
                else f"not JSON ({clip(ctype, 60)}; a proxy or login page?)"
            )
        else:
            what = f"malformed JSON ({clip(str(exc), 120)}; truncated?)"
        raise target.error(f"the API server's response is {what}") from exc


def _deadline_error(target: Target, deadline: Deadline) -> InputError:
    return target.error(
        f"the read did not finish within {deadline.seconds:g}s (--timeout); raise it for a large cluster"
    )


def _transport_error(exc: MaxRetryError, target: Target, limits: Limits) -> InputError:
    reason = exc.reason
    if isinstance(reason, NewConnectionError):
        text = str(reason)  # "<HTTPConnection object at 0x...>: Failed to establish a new connection: ..."
        what = f"cannot reach the API server: {clip(text.split('>: ', 1)[-1], 200)}"
        return target.error(f"{what}; check the kubeconfig/context (kubectl cluster-info)")
    if isinstance(reason, TransportTimeout):
        return target.error(
            f"no response within {limits.request_timeout:g}s (--request-timeout); the API server is "
            "silent or unreachable (kubectl cluster-info)"
        )
    if isinstance(reason, ProtocolError):
        return target.error(
            f"the connection broke {limits.retries + 1} times ({clip(str(reason), 120)}); "
            "retry later or check the network path"
        )
    if isinstance(reason, ResponseError):  # retried statuses that never got better
        return target.error(f"gave up after {limits.retries + 1} attempts: {clip(str(reason), 120)}")
    return target.error(f"cannot reach the API server: {clip(str(reason or exc), 200)}")
