"""Where an account stands against the record of its last successful apply: superseded by a
newer merge, already applied, or pending since which apply and by which merges.

The record is kept outside the runner, where every later run reads it and people see it: the
forge's (`Forge.last_applied`: a deployment of the environment `production-<name>`). The
decisions taken from it, and the words that say them, are the same for every forge, here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reconciler.accounts.history import (
    HistoryError,
    Scope,
    changed_between,
    has_commit,
    merges_between,
    on_line,
)
from reconciler.accounts.targets import environment_of
from reconciler.gitops.forge import Forge, LastApply


def pending_since(since: str | None, requests: Iterable[int], sign: str) -> str:
    """'pending since 9fceb02d0ae5, #31, #32' (or 'never applied, ...'): `since`, the last
    successful apply's commit; `requests`, the merges' since."""
    said = f"pending since {since[:12]}" if since else "never applied"
    return "".join([said, *(f", {sign}{number}" for number in requests)])


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
        return pending_since(self.since, self.requests, self.sign)

    def superseded(self, sha: str) -> str:
        """Why nothing was applied at `sha`, naming the merge that supersedes it."""
        by = (self.superseded_by or "")[:12]
        if self.superseding_request is not None:
            by += f" ({self.sign}{self.superseding_request})"
        return (
            f"superseded by {by}, which changed its files since {sha[:12]}: nothing was "
            "applied; the apply of the newer merge applies it"
        )


def standing(forge: Forge, environment: str, scope: Scope, sha: str, head: str) -> Standing:
    """Where the account of `scope` stands at `sha` when the default branch is at `head`:
    superseded when its files there are not the head's; else applied when they are its last
    apply's (the merges since, if any, undid each other); else pending, by the merges since its
    last apply (every one: never applied). Its record is kept in `environment`; a record at a
    commit the default branch never pointed at (off `head`'s first-parent line, and not past
    `head` on a line through it: a pull request's head, another branch) says nothing of what it
    holds, so where it stands is then unknown (a `HistoryError`)."""
    if head != sha and changed_between(scope, sha, head):
        later = merges_between(scope, sha, head)
        merge = later[0] if later else head
        found = forge.requests_of([merge])
        return Standing(
            scope.name,
            forge.words.sign,
            superseded_by=merge,
            superseding_request=found[0] if found else None,
        )
    last = forge.last_applied(environment_of(environment, scope.name))
    if last is not None and not has_commit(scope, last.sha):
        raise _unheld(forge, scope, last)
    if last is not None and not _counts(scope, last.sha, head):
        raise _off_line(scope, last, head)
    since = last.sha if last is not None else None
    applied = since is not None and not changed_between(scope, since, sha)
    merges = merges_between(scope, since, sha)  # applied: those that undid each other
    requests = tuple(forge.requests_of(merges))
    return Standing(scope.name, forge.words.sign, since, tuple(merges), requests, applied)


def _unheld(forge: Forge, scope: Scope, last: LastApply) -> HistoryError:
    """The refusal of a last successful apply at a commit the checkout lacks (a shallow
    checkout, or a default branch rewritten since): what was applied there is unknown."""
    return HistoryError(
        f"{scope.name}: its last successful apply, {last.record}, is at {last.sha[:12]}, which "
        "this checkout does not hold: the checkout is shallow, or the default branch was "
        "rewritten (force-pushed) since; nothing is applied",
        hint=f"check out the whole history ({forge.words.full_history}); after a "
        "rewrite, retire that deployment (docs/troubleshooting.md): the account is then applied "
        "from the apply before it, or as never applied",
    )


def _counts(scope: Scope, record: str, head: str) -> bool:
    """Whether a record at `record` counts: on `head`'s first-parent line, or past `head` on a
    line through it (a run queued behind a newer apply: its commit is older than the record)."""
    return on_line(scope, record, head) or on_line(scope, head, record)


def _off_line(scope: Scope, last: LastApply, head: str) -> HistoryError:
    """The refusal of a last successful apply at a commit the default branch never pointed at
    (a pull request's head is an ancestor of its merge, yet was never the branch's): what the
    branch holds as applied is unknown."""
    return HistoryError(
        f"{scope.name}: its last successful apply, {last.record}, is at {last.sha[:12]}, which "
        f"the default branch never pointed at (not on its first-parent line up to "
        f"{head[:12]}: a pull request's head, or another branch); nothing is applied",
        hint="retire that deployment (docs/troubleshooting.md): the account is then applied "
        "from the apply before it, or as never applied",
    )
