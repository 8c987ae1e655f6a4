"""A small client of GitHub's REST API: the few calls the CI jobs make, over the forges' shared
client (`reconciler.gitops.rest`: retries, errors, paging by the `Link` header only to the
API's own origin)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Self

from reconciler.errors import ReconcilerError
from reconciler.gitops.rest import ForgeError, Rest
from reconciler.lean_httpx import httpx
from reconciler.secrets import Secret

DEFAULT_API_URL = "https://api.github.com"


class GitHubError(ForgeError):
    """GitHub answered with an error, or could not be reached."""


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


class GitHub(Rest):
    """GitHub's REST API for one repository (`owner/name`), authenticated with a token;
    `author`: the login that token writes as."""

    name = "GitHub"
    error = GitHubError
    config_error = GitHubConfigError
    hints = _HINTS

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
        super().__init__(api_url, token, {
            "Authorization": f"Bearer {token.reveal()}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }, variable="GITHUB_API_URL", transport=transport, backoff=backoff)  # fmt: skip
        self.repository = repository
        self.author = author

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

    def repo_path(self, path: str) -> str:
        """The repository's own `path` (`issues/42/comments`)."""
        return f"/repos/{self.repository}/{path.lstrip('/')}"
