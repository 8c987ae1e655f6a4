"""One request to the service, from any thread: auth, retries, errors and read-only mode.

Retries (stamina): a request that is safe to repeat (`repeatable`) is retried after a connection
failure, a timeout, a 429 or a 5xx. One that is not (the bulk invitation) is retried only after
a 429 or when the connection was never made; after a 5xx, a timeout or a dropped connection it
raises `AmbiguousOutcome`, so the caller can re-read the live state and decide. A Retry-After
from the service (a 429's or a 5xx's) is honoured (never sooner, plus jitter), within the
policy's total time; the error carries it, so a caller that sends again itself waits as long.
"""

from __future__ import annotations

import json
import random
import re
import socket
import threading
import time
from collections.abc import Callable, Generator, Mapping
from decimal import Decimal
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

import stamina

from reconciler import logs
from reconciler.lean_httpx import httpx
from reconciler.redaction import shown
from reconciler.service import encode
from reconciler.service.config import ClientConfig
from reconciler.service.errors import (
    Abandoned,
    AmbiguousOutcome,
    Conflict,
    Forbidden,
    InvalidRequest,
    ItemError,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ReadOnlyViolation,
    ServerError,
    ServiceError,
    TransportFailure,
    Unauthorized,
    UnexpectedResponse,
    UnknownHost,
)
from reconciler.service.reach import reach
from reconciler.service.retries import (
    announce_retries,
    is_loopback,
    refused,
    retry_after_seconds,
)
from reconciler.service.session import TokenSource

_log = logs.get_logger("reconciler.service")

_ERROR_CLASSES: dict[int, type[ServiceError]] = {
    400: InvalidRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    422: InvalidRequest,
}


class _BearerAuth(httpx.Auth):
    """Adds the token at the last moment, so it lives in one place only; after a 401 it signs in
    again (when it has credentials) and sends the refused request once more: a 401 did
    nothing, so even an invitation is safe to resend."""

    def __init__(self, tokens: TokenSource) -> None:
        self._tokens = tokens

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        token = self._tokens.current()
        request.headers["Authorization"] = f"Bearer {token.reveal()}"
        response = yield request
        if response.status_code == 401 and self._tokens.can_renew:
            fresh = self._tokens.renew(stale=token)
            request.headers["Authorization"] = f"Bearer {fresh.reveal()}"
            yield request

    def __repr__(self) -> str:
        return "_BearerAuth(token=Secret('(sensitive value)'))"


class _RefusedHere(TransportFailure):
    """A connection refused by this machine (a loopback address): reported, never retried."""


class Transport:
    """A pool of at most `parallelism` connections to the service, shared by every thread."""

    def __init__(self, config: ClientConfig, *, read_only: bool) -> None:
        announce_retries(config.retry.attempts)
        self.config = config
        self.read_only = read_only
        self.tokens = TokenSource(
            config.base_url,
            config.token,
            config.credentials,
            timeout=config.timeout,
            user_agent=config.user_agent,
            connect_hint=config.names.connect_hint,
            renew_hint=config.names.renew,
        )
        self._http = httpx.Client(
            base_url=config.base_url + "/",
            auth=_BearerAuth(self.tokens),
            headers={"User-Agent": config.user_agent, "Accept": "application/json"},
            timeout=httpx.Timeout(
                config.timeout, connect=config.connect_timeout, pool=max(config.timeout, 60.0)
            ),
            limits=httpx.Limits(
                max_connections=config.parallelism, max_keepalive_connections=config.parallelism
            ),
            follow_redirects=False,
            **reach(config.base_url),
        )
        self._abandoned = threading.Event()

    def close(self) -> None:
        self._http.close()

    def abandon(self) -> None:
        """Send nothing more: a request not yet sent, or about to be retried, raises
        `Abandoned` (one already on the wire finishes)."""
        self._abandoned.set()

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: object = None,
        repeatable: bool = True,
    ) -> Any:
        """Send one request (with its retries) and return the decoded JSON answer, or None."""
        if self.read_only and method != "GET":
            raise ReadOnlyViolation(
                f"refusing to send {method} /{path}: this client is read-only",
                hint="plan, drift, export and the look commands never change the account",
            )
        content = None if body is None else encode.dumps(body).encode()
        policy = self.config.retry
        deadline = time.monotonic() + policy.total_seconds
        answer: Any = None
        for attempt in stamina.retry_context(
            on=_should_retry(repeatable, deadline, policy.wait_jitter, self._abandoned),
            attempts=policy.attempts,
            timeout=policy.total_seconds,
            wait_initial=policy.wait_initial,
            wait_max=policy.wait_max,
            wait_jitter=policy.wait_jitter,
        ):
            with attempt:
                answer = self._send_once(method, path, params, content, repeatable)
        return answer

    def _send_once(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None,
        content: bytes | None,
        repeatable: bool,
    ) -> Any:
        if self._abandoned.is_set():
            raise Abandoned(f"{method} /{path} was not sent: the command stopped reading")
        headers = {"Content-Type": "application/json"} if content is not None else None
        started = time.monotonic()
        try:
            response = self._http.request(
                method, path, params=params, content=content, headers=headers
            )
        except httpx.InvalidURL as error:  # a value too long for a URL, say: never sent
            raise InvalidRequest(
                f"{method} /{path} cannot be sent, so nothing was sent: {error}"
            ) from None
        except httpx.TransportError as error:
            _log.debug(
                "service request failed",
                method=method,
                path="/" + path,
                error=type(error).__name__,
                elapsed_ms=round((time.monotonic() - started) * 1000, 1),
            )
            raise self._transport_failure(method, path, error, repeatable) from error
        _log.debug(
            "service request",
            method=method,
            path="/" + path,
            params=dict(params or {}),
            status=response.status_code,
            elapsed_ms=round((time.monotonic() - started) * 1000, 1),
        )
        if response.is_success:
            return self._success_body(method, path, response)
        raise self._error(method, path, response, repeatable)

    def _transport_failure(
        self, method: str, path: str, error: httpx.TransportError, repeatable: bool
    ) -> ServiceError:
        lookup = _name_lookup_failure(error)
        if lookup is not None:
            host = urlsplit(self.config.base_url).hostname
            return UnknownHost(
                f"cannot find the service's host {host!r} (DNS: {lookup.strerror or lookup}); "
                "nothing was sent",
                hint=f"check the base URL ({self.config.names.base_url}) and the network",
            )
        if isinstance(error, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
            # Refused by this machine: nothing listens there, and waiting will not change it.
            here = isinstance(error, httpx.ConnectError) and is_loopback(self.config.base_url)
            kind = _RefusedHere if here and refused(error) else TransportFailure
            return kind(
                f"could not connect to the service at {self.config.base_url}: {_describe(error)}",
                surely_not_sent=True,
                hint=self.config.names.connect_hint,
            )
        what = (
            "no answer in time"
            if isinstance(error, httpx.TimeoutException)
            else "the connection was dropped before a complete answer"
        )
        if not repeatable:
            return AmbiguousOutcome(
                f"{method} /{path} may or may not have taken effect: {what}",
                hint="re-read the live state to see what happened before sending it again",
            )
        return TransportFailure(
            f"{method} /{path} failed: {what} ({_describe(error)})", surely_not_sent=False
        )

    def _success_body(self, method: str, path: str, response: httpx.Response) -> Any:
        if not response.content.strip():
            return None
        try:
            return json.loads(response.content, parse_float=Decimal)
        except (ValueError, RecursionError) as error:
            what = "is nested too deeply" if isinstance(error, RecursionError) else "is not JSON"
            raise UnexpectedResponse(
                f"the answer to {method} /{path} ({response.status_code}) {what}",
                status=response.status_code,
            ) from None

    def _error(
        self, method: str, path: str, response: httpx.Response, repeatable: bool
    ) -> ServiceError:
        status = response.status_code
        title, detail, item_errors = _problem(response)
        reason = _reason(status)
        explanation = detail or title
        what = f"{method} /{path} failed: {status} {reason}"
        if explanation and explanation != reason:
            what = f"{what}: {explanation}"
        details: dict[str, Any] = {
            "status": status,
            "detail": detail,
            "item_errors": item_errors,
            "retry_after": _retry_after(response),
        }
        if status == 401:
            because = f": {explanation}" if explanation and explanation != reason else ""
            return Unauthorized(
                f"the service refused the token from {self.config.token_source} "
                f"(401 {reason}{because})",
                hint="check that the token is current and meant for this service address",
                **details,
            )
        if status == 429:
            return RateLimited(what, **details)
        if status >= 500:
            if not repeatable:
                return AmbiguousOutcome(
                    f"{method} /{path} may or may not have taken effect: {status} {reason}",
                    hint="re-read the live state to see what happened before sending it again",
                    **details,
                )
            return ServerError(what, **details)
        return _ERROR_CLASSES.get(status, ServiceError)(what, **details)


def _should_retry(
    repeatable: bool, deadline: float, jitter: float, abandoned: threading.Event
) -> Callable[[Exception], Any]:
    """stamina's hook: whether to retry, or how long to wait when the service said so."""

    def hook(error: Exception) -> bool | float:
        if abandoned.is_set():
            return False
        if isinstance(error, RateLimited | ServerError) and error.retry_after is not None:
            if time.monotonic() + error.retry_after > deadline:
                return False  # the service asks for a longer wait than the time left
            # Never earlier than asked; the jitter keeps parallel fetches from returning at once.
            return error.retry_after + random.uniform(0, jitter)
        if isinstance(error, RateLimited | ServerError):
            # Without Retry-After: stamina's exponential backoff with jitter. A ServerError is
            # raised only for repeatable requests; others get AmbiguousOutcome.
            return True
        if isinstance(error, TransportFailure):
            if isinstance(error, _RefusedHere):
                return False
            return repeatable or error.surely_not_sent
        return False

    return hook


def _problem(response: httpx.Response) -> tuple[str | None, str | None, list[ItemError]]:
    """Title, detail and item errors of an RFC 9457 answer, or a short note on any other."""
    text = response.content.decode("utf-8", "replace").strip()
    if not text:
        return None, "the answer had no body", []
    try:
        body = json.loads(text)
    except RecursionError:
        return None, "an answer nested too deeply to read", []
    except ValueError:
        content_type = response.headers.get("content-type", "unknown type").split(";")[0]
        return None, f"a non-JSON answer ({shown(content_type, 60)}): {shown(text)}", []
    if not isinstance(body, dict):
        return None, f"an unexpected JSON answer: {shown(json.dumps(body))}", []
    title = body.get("title") if isinstance(body.get("title"), str) else None
    detail = body.get("detail") if isinstance(body.get("detail"), str) else None
    for spring in ("message", "error"):  # what Spring Boot's default error answer calls it
        if detail is None and isinstance(body.get(spring), str) and body[spring].strip():
            detail = body[spring]
    errors = body.get("errors")
    if not isinstance(errors, list):
        errors = []
    return title, detail, [_item_error(error) for error in errors]


def _item_error(error: object) -> ItemError:
    """One item error: problem+json's `{index?, field?, message}` or Spring's `{field,
    defaultMessage}`, whose field may start with the item's index (`[1].workerEmail`)."""
    if not isinstance(error, dict):
        return ItemError(message=str(error))
    index = error.get("index")
    field = error.get("field")
    message = error.get("message", error.get("defaultMessage", "invalid"))
    if index is None and isinstance(field, str) and (found := _INDEXED.fullmatch(field)):
        index, field = int(found["index"]), found["field"] or None
    return ItemError(
        message=str(message),
        index=index if isinstance(index, int) and not isinstance(index, bool) else None,
        field=field if isinstance(field, str) else None,
    )


_INDEXED = re.compile(r"\[(?P<index>[0-9]{1,9})\]\.?(?P<field>.*)")


def _retry_after(response: httpx.Response) -> float | None:
    """Retry-After in seconds, from a number or an HTTP date."""
    return retry_after_seconds(response.headers.get("retry-after"))


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _name_lookup_failure(error: BaseException) -> socket.gaierror | None:
    """The DNS error under a connection error (httpx wraps httpcore, which wraps it), if any."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, socket.gaierror):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _describe(error: Exception) -> str:
    return str(error) or type(error).__name__
