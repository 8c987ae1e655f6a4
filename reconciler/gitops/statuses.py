"""The plan's commit status on the change request's head: a check branch protection can require,
and the counts of a saved plan.

The plan workflow runs on the default branch (dispatched), so GitHub gives the pull request's
head no check of its own: the workflow sets one, `reconciler/plan`, pending while it plans,
success with each account's counts (`accounts.saved_view.plan_counts`), failure when an
account's plan failed or was refused.

The approvals' status, `reconciler/approvals` (with a key: `reconciler/approvals/<key>`), is
pending until every payrun to pay has the approvals its policy asks for, success when each
has; branch protection can require it. It is advice for the reviewer, never the gate: a pull
request's own workflow could post a status of that name, so `apply` reads the reviews again at
the merge, before any write. It is set by the plan job (from the verdicts the saved plan keeps)
and again on each review (GitHub's `pull_request_review` event, with no secret: the reviews
read with the workflow's token, the money to pay from the head's reviewed plan, judged again
by `accounts.approving.judge_again`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from reconciler.accounts.saved_view import plan_counts

if TYPE_CHECKING:
    from collections.abc import Sequence

    from reconciler.accounts.approving import Judged
    from reconciler.plan.approvals import ReviewSource

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
    return _post(forge, sha, state, description, context, target_url)


def set_approvals_status(
    forge: Statuses, sha: str, verdicts: Sequence[Judged], context: str, target_url: str
) -> str:
    """POST the status on `sha`; what it says."""
    from reconciler.accounts.approving import approvals_state

    state, description = approvals_state(verdicts)
    return _post(forge, sha, state, description, context, target_url)


#: What the status says when the head has no reviewed plan (yet).
NOT_PLANNED = "the head's reviewed plan is not found (not planned yet, or it failed)"


def status_from_plans(
    forge: Statuses, source: ReviewSource, plans: Path, sha: str, context: str, target_url: str
) -> str:
    """Set the status on `sha` from the reviewed plan `plans` (or a folder of accounts'
    plans, `<name>.json` each) and the reviews `source` reads now; what it says."""
    from reconciler.accounts.approving import judge_again, reviewed_of

    files = sorted(plans.glob("*.json")) if plans.is_dir() else [plans]
    if not any(path.is_file() for path in files):
        forge.set_status(sha, "pending", context, NOT_PLANNED, target_url)
        return f"pending: {NOT_PLANNED}"
    judged: list[Judged] = []
    for path in files:
        reviewed = reviewed_of(path)
        if reviewed is not None:
            account = path.stem if plans.is_dir() else ""
            judged += [(account, v) for v in judge_again(reviewed, source).values()]
    return set_approvals_status(forge, sha, judged, context, target_url)


def _post(forge: Statuses, sha: str, state: str, description: str, context: str,
          target_url: str) -> str:  # fmt: skip
    """POST the status, its description cut to the forge's limit; what it says."""
    if len(description) > DESCRIPTION_LIMIT:
        description = description[: DESCRIPTION_LIMIT - 1] + "…"
    forge.set_status(sha, state, context, description, target_url)
    return f"{state}: {description}"
