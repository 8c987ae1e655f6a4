"""GitLab, the CI flow's second forge: its REST client (`client`), the adapter the flow calls
(`forge.GitLabForge`), and the pipeline's own jobs (`pipeline`: the child pipeline, the
accounts file a merge request is planned with); and whether a job's environment is GitLab's
(`named_by`, `configured`, `open_forge`: `reconciler.gitops.environment` asks each adapter)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reconciler.gitops.gitlab.forge import GitLabForge

#: The variables a GitLab CI job has: its API's address and its project.
API_URL, PROJECT = "CI_API_V4_URL", "CI_PROJECT_ID"


def named_by(environ: Mapping[str, str]) -> bool:
    """A GitLab CI job (GITLAB_CI), or its API's address and project."""
    return environ.get("GITLAB_CI") == "true" or bool(environ.get(API_URL) and environ.get(PROJECT))


def configured(environ: Mapping[str, str]) -> bool:
    """A token, the API's address and the project (GITLAB_TOKEN, CI_API_V4_URL, CI_PROJECT_ID)."""
    return all(environ.get(name) for name in ("GITLAB_TOKEN", API_URL, PROJECT))


def open_forge(environ: Mapping[str, str]) -> GitLabForge:
    from reconciler.gitops.gitlab.forge import GitLabForge

    return GitLabForge.from_environment(environ)
