"""Where an account stands against the record of its last successful apply: superseded by a
newer merge, already applied, or pending since which apply and by which merges.

The record is kept outside the runner, where every later run reads it and people see it: a
GitHub deployment with its statuses (`deployments`), or GitLab's own deployments of the
environment `production-<name>` (`gitlab_record`). Each answers the two questions of
`ApplyRecord`; the decisions taken from them, and the words that say them, are the same for
both, here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from reconciler.gitops.deployments import environment_of, last_applied
from reconciler.gitops.github import GitHub
from reconciler.gitops.history import (
    HistoryError,
    Scope,
    changed_between,
    has_commit,
    merges_between,
)
from reconciler.gitops.runs import merged_pull_request


@dataclass(frozen=True, slots=True)
class LastApply:
    """An account's last successful apply: its commit, and which record says so (for a
    message: 'deployment 7 in production-eu')."""

    sha: str
    record: str


class ApplyRecord(Protocol):
    """An account's last successful apply, and the requests merges came from."""

    @property
    def sign(self) -> str:
        """How a request is written before its number: '#' (GitHub) or '!' (GitLab)."""
        ...

    def last_applied(self, account: str) -> LastApply | None:
        """The account's last successful apply; None: never applied."""
        ...

    def requests_of(self, merges: Sequence[str]) -> list[int]:
        """The pull or merge requests merged as `merges`, in order, each once."""
        ...


class GitHubRecord:
    """The `ApplyRecord` of a GitHub repository: the tool's deployments (task
    `deploy:reconciler`) of `production-<name>` and their statuses, and its pull requests."""

    sign = "#"

    def __init__(self, github: GitHub, environment: str) -> None:
        self.github = github
        self.environment = environment  # `production-{account}`, or one environment's name

    def last_applied(self, account: str) -> LastApply | None:
        environment = environment_of(self.environment, account)
        found = last_applied(self.github, environment)
        if found is None:
            return None
        return LastApply(found.sha, f"deployment {found.deployment_id} in {environment}")

    def requests_of(self, merges: Sequence[str]) -> list[int]:
        return pulls_of(self.github, merges)


def pulls_of(github: GitHub, merges: Iterable[str]) -> list[int]:
    """The pull requests merged as `merges`, in order, each once (a direct push has none)."""
    numbers: list[int] = []
    for merge in merges:
        pulls = github.paginate(github.repo_path(f"commits/{merge}/pulls"))
        pull = merged_pull_request(pulls, merge)
        if pull is not None and int(pull["number"]) not in numbers:
            numbers.append(int(pull["number"]))
    return numbers


@dataclass(frozen=True, slots=True)
class Standing:
    """One account at the commit a run applies."""

    account: str
    sign: str
    since: str | None = None  # the last successful apply's commit; None: never applied
    merges: tuple[str, ...] = ()  # the merges not applied, oldest first
    requests: tuple[int, ...] = ()  # their requests
    applied: bool = False  # its files at the commit are those of its last apply
    superseded_by: str | None = None  # the newer merge that changed its files
    superseding_request: int | None = None

    def pending(self) -> str:
        """'pending since 9fceb02d0ae5, !31, !32' (or 'never applied, ...')."""
        said = f"pending since {self.since[:12]}" if self.since else "never applied"
        return "".join([said, *(f", {self.sign}{number}" for number in self.requests)])

    def superseded(self, sha: str) -> str:
        """Why nothing was applied at `sha`, naming the merge that supersedes it."""
        by = (self.superseded_by or "")[:12]
        if self.superseding_request is not None:
            by += f" ({self.sign}{self.superseding_request})"
        return (
            f"superseded by {by}, which changed its files since {sha[:12]}: nothing was "
            "applied; the apply of the newer merge applies it"
        )


def standing(record: ApplyRecord, scope: Scope, sha: str, head: str) -> Standing:
    """Where the account of `scope` stands at `sha` when the default branch is at `head`:
    superseded when its files there are not the head's; else applied when they are its last
    apply's (the merges since, if any, undid each other); else pending, by the merges since its
    last apply (every one: never applied)."""
    if head != sha and changed_between(scope, sha, head):
        later = merges_between(scope, sha, head)
        merge = later[0] if later else head
        found = record.requests_of([merge])
        return Standing(
            scope.name,
            record.sign,
            superseded_by=merge,
            superseding_request=found[0] if found else None,
        )
    last = record.last_applied(scope.name)
    if last is not None and not has_commit(scope, last.sha):
        raise _unheld(scope, last)
    since = last.sha if last is not None else None
    applied = since is not None and not changed_between(scope, since, sha)
    merges = merges_between(scope, since, sha)  # applied: those that undid each other
    requests = tuple(record.requests_of(merges))
    return Standing(scope.name, record.sign, since, tuple(merges), requests, applied)


def _unheld(scope: Scope, last: LastApply) -> HistoryError:
    """The refusal of a last successful apply at a commit the checkout lacks (a shallow
    checkout, or a default branch rewritten since): what was applied there is unknown."""
    return HistoryError(
        f"{scope.name}: its last successful apply, {last.record}, is at {last.sha[:12]}, which "
        "this checkout does not hold: the checkout is shallow, or the default branch was "
        "rewritten (force-pushed) since; nothing is applied",
        hint="check out the whole history (fetch-depth: 0; on GitLab, GIT_DEPTH: 0); after a "
        "rewrite, retire that deployment (docs/troubleshooting.md): the account is then applied "
        "from the apply before it, or as never applied",
    )
