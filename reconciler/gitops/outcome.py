"""What became of each account after a merge, said on its record and on the change request.

An account's outcome is one of: applied (with the counts), nothing to do, superseded (by which
merge), refused or failed (why). The apply job records it (the forge's record of the account's
apply at the commit); a job with no account's secret then reads those records and keeps ONE
note on each change request the run applied (or tried to), updated in place: a row per
account, later runs replacing their accounts' rows, with the link to each run
(`notes.post_outcomes`; its text: `reconciler.render.outcome`).
"""

from __future__ import annotations

from dataclasses import dataclass

APPLIED, NOTHING, SUPERSEDED, REFUSED, FAILED = (
    "applied",
    "nothing to do",
    "superseded",
    "refused",
    "failed",
)
#: The outcome comment's marker kind.
OUTCOME = "outcome"
#: The states of a record of an apply.
SUCCESS, FAILURE, INACTIVE, IN_PROGRESS = "success", "failure", "inactive", "in_progress"
_STATE = {APPLIED: SUCCESS, NOTHING: SUCCESS, SUPERSEDED: INACTIVE, REFUSED: FAILURE,
          FAILED: FAILURE}  # fmt: skip
#: The outcomes, as a record's description starts.
KINDS = tuple(_STATE)


@dataclass(frozen=True, slots=True)
class Landing:
    """One account's outcome in one run."""

    account: str
    kind: str
    description: str
    plan: str = ""  # applied: `reviewed` (the saved plan) or `replanned` (an equal new plan)

    @property
    def state(self) -> str:
        """The deployment status that says it."""
        return _STATE[self.kind]

    @property
    def failed(self) -> bool:
        return self.kind in (REFUSED, FAILED)

    @property
    def annotation(self) -> str:
        """The workflow command that shows it: notice, warning or error."""
        if self.failed:
            return "error"
        return "warning" if self.kind == SUPERSEDED else "notice"

    @property
    def summary(self) -> str:
        """'applied: the reviewed plan was applied: 1 to invite' (kind first, for a status)."""
        return self.description if self.description.startswith(self.kind) else (
            f"{self.kind}: {self.description}"
        )  # fmt: skip
