"""Where `reconciler apply` and `plan` read a change request's approvals from: the forge the
job runs on, as the CI flow's adapters read it (`github.reviews`, `gitlab.reviews`).

The decisions are the core's (`reconciler.plan.approvals.judge`, called inside `apply` right
before any write, and by `plan` for the comment); this module only finds the forge in the job's
environment and gives its reads to the core as a `ReviewSource`. Outside CI (no forge named by
the environment) there is none, and the core refuses a payrun under an approvals policy:
holding the service token and the plan key is not an approval.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Protocol

from reconciler.plan.approvals import Approver, RequestFacts, ReviewSource


class Reviews(Protocol):
    """A forge adapter's reads of approvals (GitHub's and GitLab's forges have them). Each
    may raise the adapter's error (a `ReconcilerError`): the core then refuses the payruns,
    saying why, and pays none of them."""

    def request_facts(self, number: int) -> RequestFacts:
        """Change request `number` as the forge says it now."""
        ...

    def members(self, approver: Approver) -> frozenset[int] | None:
        """The forge user ids `approver` stands for; None: the forge will not say."""
        ...

    def close(self) -> None: ...


class ForgeReviews:
    """A `ReviewSource` over a forge adapter: the change requests in range, read each time
    they are asked for (apply reads them again right before any write); who `from` names,
    asked once per approver."""

    def __init__(self, forge: Reviews, numbers: Sequence[int]) -> None:
        self.forge = forge
        self.numbers = tuple(dict.fromkeys(numbers))
        self._members: dict[Approver, frozenset[int] | None] = {}

    def requests(self) -> Sequence[RequestFacts]:
        return [self.forge.request_facts(number) for number in self.numbers]

    def members(self, approver: Approver) -> frozenset[int] | None:
        if approver not in self._members:
            self._members[approver] = self.forge.members(approver)
        return self._members[approver]

    def close(self) -> None:
        self.forge.close()


def forge_of(environ: Mapping[str, str]) -> str | None:
    """`github` or `gitlab`, the forge the job's environment names; None: neither (outside
    CI). GitHub: a GitHub Actions job (GITHUB_ACTIONS), or a repository and a token as the
    `reconciler github` commands read them; GitLab: a GitLab CI job (GITLAB_CI), or its API's
    address and project."""
    github_token = environ.get("GITHUB_TOKEN") or environ.get("GH_TOKEN")
    if environ.get("GITHUB_ACTIONS") == "true" or (
        environ.get("GITHUB_REPOSITORY") and github_token
    ):
        return "github"
    if environ.get("GITLAB_CI") == "true" or (
        environ.get("CI_API_V4_URL") and environ.get("CI_PROJECT_ID")
    ):
        return "gitlab"
    return None


def source_from_env(
    requests: Sequence[int], environ: Mapping[str, str] | None = None
) -> ReviewSource | None:
    """The reviews of the change requests `requests` on the forge of the job's environment;
    None outside CI. A job of a forge that lacks its token or repository is refused with
    the adapter's configuration error (saying which variable), never taken as no forge."""
    environ = os.environ if environ is None else environ
    forge: Reviews
    match forge_of(environ):
        case "github":
            from reconciler.gitops.github.forge import GitHubForge

            forge = GitHubForge.from_environment(environ)
        case "gitlab":
            from reconciler.gitops.gitlab.forge import GitLabForge

            forge = GitLabForge.from_environment(environ)
        case _:
            return None
    return ForgeReviews(forge, requests)
