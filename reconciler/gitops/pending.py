"""Which accounts a run applies: each from its last successful apply to the commit run at.

Not the push's `before`: a forge keeps one pending run per concurrency group and cancels the
older one, and a failed or cancelled apply leaves its merge behind; so an account is pending
while its files at the commit differ from its files at its last successful apply (its record,
`Forge.last_applied`), or it has never been applied. For each, the merges pending (oldest
first) and their change requests: the plan reviewed on the request of the newest of them was
made from the files the run applies, if any plan was. The same for every account of a fleet,
the single desired-state PATH's included (`accounts.targets`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Generic, TypeVar

from reconciler.accounts.history import HistoryError
from reconciler.accounts.targets import Target, Targets
from reconciler.gitops.forge import Forge
from reconciler.gitops.record import pending_since, standing

#: Where the plan reviewed for a pending account is kept (the forge's kind of record).
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Pending(Generic[R]):
    """An account whose files at the commit are not applied: since which apply, which merges."""

    account: str
    since: str | None  # the last successful apply's commit; None: never applied
    merges: tuple[str, ...]
    pulls: tuple[int, ...]
    reviewed: R | None
    unknown: str | None = None  # why its record could not be read: its apply fails, alone
    sign: str = "#"  # the forge's, before a request's number

    def describe(self) -> str:
        """'pending since 9fceb02d0ae5, #31, #32' (or 'never applied, ...'), or why where it
        stands is unknown."""
        if self.unknown is not None:
            return f"where it stands is unknown: {self.unknown}"
        return pending_since(self.since, self.pulls, self.sign)

    def annotation(self, forge: Forge, sha: str, level: str) -> str:
        """The drift check's or the pending job's line: `level` ('warning', 'notice') unless
        where it stands is unknown, which is an error."""
        said = f"not applied at {sha[:12]}: " if level == "warning" else ""
        message = f"{self.account}: {said}{self.describe()}"
        return forge.annotate("error" if self.unknown else level, message)

    def found(self, reviewed: R | None) -> Pending[R]:
        """The same, with the plan reviewed for it."""
        return dataclasses.replace(self, reviewed=reviewed)


def pending_target(forge: Forge, target: Target, sha: str) -> Pending[None] | None:
    """The account's merges not applied at `sha` (None: none). A record that cannot be read
    (its commit gone) makes the account pending, as unknown, with the request merged as
    `sha`: its apply then fails saying why, and the others' go on."""
    sign = forge.words.sign
    try:
        at = standing(forge, target.environment, target.scope, sha, sha)
    except HistoryError as error:
        pulls = tuple(forge.requests_of([sha]))
        return Pending(target.name, None, (), pulls, None, error.one_line(), sign)
    if at.applied:
        return None
    return Pending(target.name, at.since, at.merges, at.requests, None, sign=sign)


def pending_fleet(forge: Forge, accounts: Targets, sha: str) -> list[Pending[None]]:
    """The accounts not applied at `sha`, in the fleet's order."""
    found = (pending_target(forge, target, sha) for target in accounts.targets)
    return [item for item in found if item is not None]


def report(forge: Forge, accounts: Targets, sha: str) -> list[str]:
    """The drift check's lines: each account's, applied or not at `sha`."""
    lines = []
    for target in accounts.targets:
        item = pending_target(forge, target, sha)
        if item is None:
            lines.append(f"{target.name}: applied at {sha[:12]}")
        else:
            lines.append(item.annotation(forge, sha, "warning"))
    return lines
