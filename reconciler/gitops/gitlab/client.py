"""GitLab's REST API (v4) for one project, as far as the GitLab pipeline's jobs need it.

The notes, the reviewed plans (a job's artifacts), each account's deployments (its record of
the last successful apply) and the adoption merge request: decisions that belong in tested
Python, so the jobs talk to GitLab from here: `CI_API_V4_URL` and `CI_PROJECT_ID` (GitLab CI
sets them) and `GITLAB_TOKEN` (a project access token with the api scope), never a flag.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, Self

from reconciler import logs
from reconciler.errors import ReconcilerError
from reconciler.lean_httpx import httpx
from reconciler.redaction import shown
from reconciler.secrets import Secret
from reconciler.service.config import ConfigError, check_base_url
from reconciler.service.reach import reach

_TIMEOUT = 30.0


class GitLabError(ReconcilerError):
    """GitLab answered with an error, could not be reached, or is not configured."""


class GitLab:
    """One project of GitLab's REST API, authenticated with a token."""

    def __init__(
        self,
        api_url: str,
        project_id: str,
        token: Secret,
        *,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        logs.register_secret(token.reveal())
        try:  # the token goes only over https, or plain http to this machine
            api_url = check_base_url(api_url, "GitLab's API address (CI_API_V4_URL)")
        except ConfigError as error:
            raise GitLabError(error.message, hint=error.hint) from None
        self.project = f"/projects/{project_id}"
        self._http = httpx.Client(
            base_url=api_url.rstrip("/"),
            headers={"PRIVATE-TOKEN": token.reveal(), "User-Agent": "reconciler"},
            timeout=_TIMEOUT,
            transport=transport,
            **reach(api_url),
        )

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Self:
        """From GitLab CI's variables and GITLAB_TOKEN."""
        environ = os.environ if environ is None else environ
        missing = [
            name
            for name in ("CI_API_V4_URL", "CI_PROJECT_ID", "GITLAB_TOKEN")
            if not environ.get(name)
        ]
        if missing:
            raise GitLabError(
                f"not set: {', '.join(missing)}",
                hint="GitLab CI sets CI_API_V4_URL and CI_PROJECT_ID; GITLAB_TOKEN is a project "
                "access token with the api scope, a masked CI/CD variable",
            )
        return cls(
            environ["CI_API_V4_URL"], environ["CI_PROJECT_ID"], Secret(environ["GITLAB_TOKEN"])
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._http.close()

    def get(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        return self._send("GET", path, params=params).json()

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        return self._send("POST", path, json=body).json()

    def put(self, path: str, body: Mapping[str, Any]) -> Any:
        return self._send("PUT", path, json=body).json()

    def download(self, path: str) -> bytes | None:
        """A file's bytes (a job's artifacts archive); None when GitLab has none (404)."""
        answer = self._request("GET", path)
        return None if answer.status_code == 404 else self._checked("GET", path, answer).content

    def delete(self, path: str) -> None:
        self._send("DELETE", path)

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        return self._checked(method, path, self._request(method, path, **kwargs))

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return self._http.request(method, self.project + path, **kwargs)
        except httpx.HTTPError as error:
            raise GitLabError(f"could not reach GitLab: {shown(str(error))}") from None

    def _checked(self, method: str, path: str, answer: httpx.Response) -> httpx.Response:
        if not answer.is_success:
            try:
                message = answer.json().get("message", answer.reason_phrase)
            except ValueError:
                message = answer.reason_phrase
            raise GitLabError(
                f"GitLab refused {method} {path}: {answer.status_code} {shown(str(message))}"
            )
        return answer
