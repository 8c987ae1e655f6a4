"""The plan's commit status on the change request's head: a check branch protection can require,
and the counts of a saved plan.

The plan workflow runs on the default branch (dispatched), so GitHub gives the pull request's
head no check of its own: the workflow sets one, `reconciler/plan`, pending while it plans,
success with each account's counts (`accounts.saved_view.plan_counts`), failure when an
account's plan failed or was refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from reconciler.accounts.saved_view import plan_counts

#: A forge cuts a status's description at 140 characters (GitHub's).
DESCRIPTION_LIMIT = 140


class Statuses(Protocol):
    """A forge that keeps commit statuses (checks branch protection can require)."""

    def set_status(self, sha: str, state: str, context: str, description: str,
                   target_url: str) -> None: ...  # fmt: skip


#: The plan jobs' result (`needs.plan.result`) -> the status: a skipped job planned nothing.
_BY_RESULT = {"success": "success", "skipped": "success", "failure": "failure",
              "cancelled": "error"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class PlanStatus:
    """What to say on the head: a state, or the plan jobs' result with the accounts planned."""

    state: str | None = None
    plan_result: str | None = None
    names: tuple[str, ...] = ()
    plans: Path | None = None


def describe(status: PlanStatus, description: str) -> tuple[str, str]:
    """The state and description: the counts of each plan; the accounts not planned."""
    state = status.state or _BY_RESULT.get(status.plan_result or "", "error")
    if status.plan_result is None:
        return state, description
    folder = status.plans if status.plans is not None and status.plans.is_dir() else None
    planned = {p.stem for p in folder.glob("*.json")} if folder is not None else set()
    missing = [name for name in status.names if name not in planned]
    said = plan_counts(folder) if folder is not None else "no account changed"
    if missing:
        state = "failure"
        said = f"not planned: {' '.join(missing)}; " + (said if planned else "nothing planned")
    return state, f"{description} {said}".strip()


def set_plan_status(
    forge: Statuses,
    sha: str,
    status: PlanStatus,
    description: str,
    context: str,
    target_url: str,
) -> str:
    """POST the commit status; what it says."""
    state, description = describe(status, description)
    if len(description) > DESCRIPTION_LIMIT:
        description = description[: DESCRIPTION_LIMIT - 1] + "…"
    forge.set_status(sha, state, context, description, target_url)
    return f"{state}: {description}"
