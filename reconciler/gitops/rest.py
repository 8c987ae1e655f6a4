"""What a forge's REST client does whatever the forge: the token, retries, errors and paging.

A forge's client (`client.py` in its adapter's package) says only its address, the
header its token goes in and its words; its adapter (`forge.py` beside it) says the paths. The
token is registered as a secret and sent only over https, or plain http to this machine. A
request that may be sent again (a read, an update, a removal) is tried again after a 5xx, up to
three times with backoff; a creation (POST) is sent once, since a second could create a second
comment or issue. A list is paged by the `Link` header (`rel="next"`), followed only to the
API's own origin, so the token is never sent anywhere else.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Self

import stamina

from reconciler import logs
from reconciler.errors import ReconcilerError
from reconciler.lean_httpx import httpx
from reconciler.redaction import shown
from reconciler.secrets import Secret
from reconciler.service.config import ConfigError, check_base_url
from reconciler.service.reach import reach

_TIMEOUT = httpx.Timeout(30.0)
_PAGE_SIZE = 100  # the forges' maximum per_page
#: Methods that may be sent again after a 5xx or a lost answer: a repeated POST would
#: create a second comment or issue.
_REPEATABLE = frozenset({"GET", "PUT", "PATCH", "DELETE"})
_ATTEMPTS = 3


class ForgeError(ReconcilerError):
    """A forge answered with an error, or could not be reached; `status`: its HTTP status."""

    def __init__(self, message: str, *, status: int | None = None, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.status = status


class Rest:
    """A forge's REST API at `api_url` (its address read from `variable`), with `headers`
    carrying `token`; every path is under `prefix` (a project's, where the forge has one)."""

    #: The forge's name, as its messages say it ('GitHub').
    name: ClassVar[str]
    #: What the client raises: when the forge refuses or cannot be reached, when its address
    #: is refused.
    error: ClassVar[type[ForgeError]]
    config_error: ClassVar[type[ReconcilerError]]
    #: What to do about a refusal, by its status.
    hints: ClassVar[Mapping[int, str]] = {}

    def __init__(self, api_url: str, token: Secret, headers: Mapping[str, str], *,
                 variable: str, prefix: str = "", transport: httpx.BaseTransport | None = None,
                 backoff: float = 0.5) -> None:  # fmt: skip
        logs.register_secret(token.reveal())
        try:  # the token goes only over https, or plain http to this machine
            api_url = check_base_url(api_url, f"{self.name}'s API address ({variable})")
        except ConfigError as error:
            raise self.config_error(error.message, hint=error.hint) from None
        self._variable = variable
        self._prefix = prefix
        self._backoff = backoff  # the first wait before a retry, in seconds
        self._origin = httpx.URL(api_url.rstrip("/") + "/")
        self._log = logs.get_logger(f"reconciler.{self.name.lower()}")
        self._http = httpx.Client(
            base_url=api_url.rstrip("/"),
            headers={**headers, "User-Agent": "reconciler"},
            timeout=_TIMEOUT,
            transport=transport,
            **reach(api_url),
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- the calls ----------------------------------------------------------------------

    def get(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        """One object (or one page) as JSON."""
        return self._request("GET", path, params=params).json()

    def paginate(self, path: str, params: Mapping[str, str] | None = None) -> Iterator[Any]:
        """Every item of a list, following `Link: <...>; rel="next"` page after page."""
        answer = self._request("GET", path, params={"per_page": str(_PAGE_SIZE), **(params or {})})
        while True:
            body = answer.json()
            # A few lists (artifacts, workflow runs) wrap their items in an object.
            yield from body if isinstance(body, list) else self._wrapped_items(body)
            next_url = answer.links.get("next", {}).get("url")
            if next_url is None:
                return
            answer = self._request("GET", self._same_origin(next_url))

    def download(self, path: str) -> bytes | None:
        """A file's bytes (a job's artifacts archive); None when the forge has none (404)."""
        answer = self._request("GET", path, absent=True)
        return None if answer.status_code == 404 else answer.content

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """Create something; sent once only, since a second try could create it twice."""
        return self._request("POST", path, json=body).json()

    def put(self, path: str, body: Mapping[str, Any]) -> Any:
        """Set something to `body` (safe to send again)."""
        return self._request("PUT", path, json=body).json()

    def patch(self, path: str, body: Mapping[str, Any]) -> Any:
        """Change something to `body` (safe to send again)."""
        return self._request("PATCH", path, json=body).json()

    def delete(self, path: str) -> None:
        """Remove something (safe to send again)."""
        self._request("DELETE", path)

    # --- plumbing -----------------------------------------------------------------------

    def _same_origin(self, url: str) -> str:
        target = httpx.URL(url)
        origin = self._origin
        if (target.scheme, target.host, target.port) != (origin.scheme, origin.host, origin.port):
            raise self.error(
                f"{self.name}'s next-page link points to another host ({target.host}); "
                "not following it with the token"
            )
        return url

    def _wrapped_items(self, body: Any) -> list[Any]:
        if isinstance(body, dict):
            for value in body.values():
                if isinstance(value, list):
                    return value
        raise self.error(f"{self.name} answered a list request with something that is not a list")

    def _request(self, method: str, path: str, *, absent: bool = False,
                 **kwargs: Any) -> httpx.Response:  # fmt: skip
        """The answer to `method path` (`absent`: a 404 is an answer too)."""
        url = path if "://" in path else self._prefix + path  # a next page's link is whole
        attempts = _ATTEMPTS if method in _REPEATABLE else 1
        try:
            for attempt in stamina.retry_context(
                on=_Retry,
                attempts=attempts,
                wait_initial=self._backoff,
                wait_jitter=self._backoff,
                wait_max=8 * self._backoff,
            ):
                with attempt:
                    answer = self._send(method, url, absent, **kwargs)
        except _Retry as exhausted:
            raise self._refusal(method, exhausted.answer) from None
        return answer

    def _send(self, method: str, url: str, absent: bool, **kwargs: Any) -> httpx.Response:
        try:
            answer = self._http.request(method, url, **kwargs)
        except httpx.HTTPError as error:
            raise self.error(
                f"could not reach {self.name} at {self._origin}: {shown(str(error))}",
                hint=f"check {self._variable} and the runner's network",
            ) from None
        event, path, status = self.name.lower(), answer.request.url.path, answer.status_code
        self._log.debug(event, method=method, path=path, status=status)
        if answer.is_success or (absent and status == 404):
            return answer
        if status >= 500 and method in _REPEATABLE:
            raise _Retry(answer)
        raise self._refusal(method, answer)

    def _refusal(self, method: str, answer: httpx.Response) -> ForgeError:
        return self.error(
            f"{self.name} refused {method} {answer.request.url.path}: {answer.status_code} "
            f"{_message(answer)}",
            status=answer.status_code,
            hint=self.hints.get(answer.status_code),
        )


class _Retry(Exception):
    """The forge failed (5xx) on a request that may be sent again."""

    def __init__(self, answer: httpx.Response) -> None:
        super().__init__(answer.status_code)
        self.answer = answer


def _message(answer: httpx.Response) -> str:
    """What the forge said of its refusal: its `message` (with GitHub's `errors`, a 422's
    "body is too long (maximum is 65536 ...)"; another forge's may be an object of fields)."""
    try:
        body = answer.json()
    except RecursionError:
        return "(an answer nested too deeply to read)"
    except ValueError:
        return shown(answer.text) or answer.reason_phrase
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str):
        return answer.reason_phrase if message is None else shown(str(message), 500)
    details = [
        error["message"]
        for error in body.get("errors") or []
        if isinstance(error, dict) and isinstance(error.get("message"), str)
    ]
    return shown("; ".join([message, *details]), 500)
