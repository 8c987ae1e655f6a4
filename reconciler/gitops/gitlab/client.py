"""GitLab's REST API (v4) for one project, as far as the GitLab pipeline's jobs need it.

The notes, the reviewed plans (a job's artifacts), each account's deployments (its record of
the last successful apply) and the adoption merge request: decisions that belong in tested
Python, so the jobs talk to GitLab from here: `CI_API_V4_URL` and `CI_PROJECT_ID` (GitLab CI
sets them) and `GITLAB_TOKEN` (a project access token with the api scope), never a flag.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Self

from reconciler.gitops.rest import ForgeError, Rest
from reconciler.lean_httpx import httpx
from reconciler.secrets import Secret


class GitLabError(ForgeError):
    """GitLab answered with an error, could not be reached, or is not configured."""


class GitLab(Rest):
    """One project of GitLab's REST API, authenticated with a token (the forges' shared client,
    `reconciler.gitops.rest`, with the project's paths)."""

    name = "GitLab"
    error = GitLabError
    config_error = GitLabError

    def __init__(
        self,
        api_url: str,
        project_id: str,
        token: Secret,
        *,
        transport: httpx.BaseTransport | None = None,
        backoff: float = 0.5,
    ) -> None:
        super().__init__(api_url, token, {"PRIVATE-TOKEN": token.reveal()},
                         variable="CI_API_V4_URL", prefix=f"/projects/{project_id}",
                         transport=transport, backoff=backoff)  # fmt: skip
        self.project = project_id  # its id, as a message names it

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
