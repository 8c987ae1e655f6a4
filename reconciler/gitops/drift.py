"""The drift issue: what to do with the one open issue, given what `reconciler drift` found.

A pure function, so the scheduled job's behaviour is a table of cases: open an issue when drift
appears, update it when what is reported changed, close it when the account is back in sync,
and do nothing at all when the check itself failed (an error is not "no drift").
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

#: `reconciler drift` exit statuses.
IN_SYNC = 0
ERROR = 1
DRIFTED = 2


class DriftAction(enum.Enum):
    OPEN = "open"
    UPDATE = "update"
    CLOSE = "close"
    NOTHING = "nothing"


@dataclass(frozen=True, slots=True)
class DriftIssue:
    """The open drift issue as GitHub shows it: its number and its body."""

    number: int
    body: str


def decide_drift_issue(
    drift_exit_status: int, existing: DriftIssue | None, new_body: str
) -> DriftAction:
    """Open, update, close or leave alone the drift issue, from `drift`'s exit status."""
    if drift_exit_status == DRIFTED:
        if existing is None:
            return DriftAction.OPEN
        return DriftAction.NOTHING if existing.body == new_body else DriftAction.UPDATE
    if drift_exit_status == IN_SYNC:
        return DriftAction.CLOSE if existing is not None else DriftAction.NOTHING
    return DriftAction.NOTHING  # the check failed: what it would have found is unknown
