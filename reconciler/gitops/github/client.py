"""A small client of GitHub's REST API: the few calls the CI jobs make, with paging.

GitHub pages lists with a `Link` header (`rel="next"`); the client follows it, but only to the
API's own origin, so the token is never sent anywhere else.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any, Self

import stamina

from reconciler import logs
from reconciler.errors import ReconcilerError
from reconciler.lean_httpx import httpx
from reconciler.redaction import shown
from reconciler.secrets import Secret
from reconciler.service.config import ConfigError, check_base_url
from reconciler.service.reach import reach

DEFAULT_API_URL = "https://api.github.com"
_PAGE_SIZE = 100  # GitHub's maximum per_page
_TIMEOUT = httpx.Timeout(30.0)
#: Methods that may be sent again after a 5xx or a lost answer: a repeated POST would
#: create a second comment or issue.
_REPEATABLE = frozenset({"GET", "PATCH", "DELETE"})
_ATTEMPTS = 3

_log = logs.get_logger("reconciler.github")


class GitHubError(ReconcilerError):
    """GitHub answered with an error, or could not be reached."""

    def __init__(self, message: str, *, status: int | None = None, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.status = status


class GitHubConfigError(ReconcilerError):
    """The job's environment does not say which repository, or with which token."""


_HINTS = {
    401: "the token is missing or invalid: pass the workflow's GITHUB_TOKEN (or a PAT) as "
    "the environment variable GITHUB_TOKEN",
    403: "the token lacks a permission: the job needs `permissions:` with `pull-requests: "
    "write` for comments, `issues: write` for the drift issue, `actions: read` for runs",
    404: "no such repository, pull request or issue, or the token cannot see it",
}


#: Who a workflow's GITHUB_TOKEN writes as.
ACTIONS_BOT = "github-actions[bot]"
#: The login the job's token writes as, when not a workflow's GITHUB_TOKEN (a GitHub App's
#: token writes as `<app-slug>[bot]`): only what it wrote is the tool's own record.
ENV_AUTHOR = "RECONCILER_GITHUB_AUTHOR"


class GitHub:
    """GitHub's REST API for one repository (`owner/name`), authenticated with a token;
    `author`: the login that token writes as."""

    def __init__(
        self,
        repository: str,
        token: Secret,
        *,
        api_url: str = DEFAULT_API_URL,
        transport: httpx.BaseTransport | None = None,
        backoff: float = 0.5,
        author: str = ACTIONS_BOT,
    ) -> None:
        if repository.count("/") != 1 or not all(repository.split("/")):
            raise GitHubConfigError(
                f"repository {repository!r} is not of the form owner/name",
                hint="set GITHUB_REPOSITORY (GitHub Actions sets it) or pass --repository",
            )
        logs.register_secret(token.reveal())
        try:  # the token goes only over https, or plain http to this machine
            api_url = check_base_url(api_url, "GitHub's API address (GITHUB_API_URL)")
        except ConfigError as error:
            raise GitHubConfigError(error.message, hint=error.hint) from None
        self.repository = repository
        self.author = author
        self._backoff = backoff  # the first wait before a retry, in seconds
        self._origin = httpx.URL(api_url.rstrip("/") + "/")
        self._http = httpx.Client(
            base_url=api_url.rstrip("/"),
            headers={
                "Authorization": f"Bearer {token.reveal()}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "reconciler",
            },
            timeout=_TIMEOUT,
            transport=transport,
            **reach(api_url),
        )

    @classmethod
    def from_environment(
        cls, environ: Mapping[str, str] | None = None, *, repository: str | None = None
    ) -> Self:
        """From the variables GitHub Actions sets: GITHUB_REPOSITORY, GITHUB_API_URL, and
        GITHUB_TOKEN (which the workflow passes from `secrets.GITHUB_TOKEN`); and
        RECONCILER_GITHUB_AUTHOR, with another token than a workflow's."""
        environ = os.environ if environ is None else environ
        token = environ.get("GITHUB_TOKEN") or environ.get("GH_TOKEN")
        if not token:
            raise GitHubConfigError(
                "no GitHub token: GITHUB_TOKEN is not set",
                hint="in the workflow, add `env: GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}`",
            )
        repository = repository or environ.get("GITHUB_REPOSITORY")
        if not repository:
            raise GitHubConfigError(
                "no repository: GITHUB_REPOSITORY is not set",
                hint="GitHub Actions sets it; elsewhere pass --repository owner/name",
            )
        api_url = environ.get("GITHUB_API_URL") or DEFAULT_API_URL
        author = environ.get(ENV_AUTHOR) or ACTIONS_BOT
        return cls(repository, Secret(token), api_url=api_url, author=author)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- the calls ----------------------------------------------------------------------

    def repo_path(self, path: str) -> str:
        return f"/repos/{self.repository}/{path.lstrip('/')}"

    def paginate(self, path: str, params: Mapping[str, str] | None = None) -> Iterator[Any]:
        """Every item of a list, following `Link: <...>; rel="next"` page after page."""
        answer = self._request("GET", path, params={"per_page": str(_PAGE_SIZE), **(params or {})})
        while True:
            body = answer.json()
            # A few lists (artifacts, workflow runs) wrap their items in an object.
            yield from body if isinstance(body, list) else _wrapped_items(body)
            next_url = answer.links.get("next", {}).get("url")
            if next_url is None:
                return
            answer = self._request("GET", self._same_origin(next_url))

    def get(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        """One object (or one page) as JSON."""
        return self._request("GET", path, params=params).json()

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """Create something; sent once only, since a second try could create it twice."""
        return self._request("POST", path, json=body).json()

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
            raise GitHubError(
                f"GitHub's next-page link points to another host ({target.host}); "
                "not following it with the token"
            )
        return url

    def _request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
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
                    answer = self._send(method, url, **kwargs)
        except _Retry as exhausted:
            raise _refusal(method, exhausted.answer) from None
        return answer

    def _send(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            answer = self._http.request(method, url, **kwargs)
        except httpx.HTTPError as error:
            raise GitHubError(
                f"could not reach GitHub at {self._origin}: {shown(str(error))}",
                hint="check GITHUB_API_URL and the runner's network",
            ) from None
        _log.debug("github", method=method, path=answer.request.url.path, status=answer.status_code)
        if answer.is_success:
            return answer
        if answer.status_code >= 500 and method in _REPEATABLE:
            raise _Retry(answer)
        raise _refusal(method, answer)


class _Retry(Exception):
    """GitHub failed (5xx) on a request that may be sent again."""

    def __init__(self, answer: httpx.Response) -> None:
        super().__init__(answer.status_code)
        self.answer = answer


def _refusal(method: str, answer: httpx.Response) -> GitHubError:
    return GitHubError(
        f"GitHub refused {method} {answer.request.url.path}: {answer.status_code} "
        f"{_message(answer)}",
        status=answer.status_code,
        hint=_HINTS.get(answer.status_code),
    )


def _wrapped_items(body: Any) -> list[Any]:
    if isinstance(body, dict):
        for value in body.values():
            if isinstance(value, list):
                return value
    raise GitHubError("GitHub answered a list request with something that is not a list")


def _message(answer: httpx.Response) -> str:
    try:
        body = answer.json()
    except RecursionError:
        return "(an answer nested too deeply to read)"
    except ValueError:
        return shown(answer.text)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        # A 422 says what was wrong in `errors` ("body is too long (maximum is 65536 ...)").
        details = [
            error["message"]
            for error in body.get("errors") or []
            if isinstance(error, dict) and isinstance(error.get("message"), str)
        ]
        return shown("; ".join([body["message"], *details]), 500)
    return ""
