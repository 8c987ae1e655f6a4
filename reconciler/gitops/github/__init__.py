"""GitHub, the CI flow's first forge: its REST client (`client`), its record of an account's
last apply (`deployments`), where a merge finds its reviewed plan (`runs`), and the adapter the
flow calls (`forge.GitHubForge`); and whether a job's environment is GitHub's (`named_by`,
`configured`, `open_forge`: `reconciler.gitops.environment` asks each adapter)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from reconciler.gitops.github.client import ACTIONS_BOT, GitHub, GitHubConfigError, GitHubError

if TYPE_CHECKING:
    from reconciler.gitops.github.forge import GitHubForge

__all__ = ["ACTIONS_BOT", "GitHub", "GitHubConfigError", "GitHubError"]


def named_by(environ: Mapping[str, str]) -> bool:
    """A GitHub Actions job (GITHUB_ACTIONS), or a repository and a token as the `reconciler
    github` commands read them."""
    return environ.get("GITHUB_ACTIONS") == "true" or configured(environ)


def configured(environ: Mapping[str, str]) -> bool:
    """A token and a repository (GITHUB_TOKEN and GITHUB_REPOSITORY, as a workflow has them)."""
    token = environ.get("GITHUB_TOKEN") or environ.get("GH_TOKEN")
    return bool(token and environ.get("GITHUB_REPOSITORY"))


def open_forge(environ: Mapping[str, str]) -> GitHubForge:
    from reconciler.gitops.github.forge import GitHubForge

    return GitHubForge.from_environment(environ)
