"""The plan's commit status on the change request's head: a check branch protection can require,
and the counts of a saved plan.

The plan workflow runs on the default branch (dispatched), so GitHub gives the pull request's
head no check of its own: the workflow sets one, `reconciler/plan`, pending while it plans,
success with each account's counts, failure when an account's plan failed or was refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from reconciler.errors import ReconcilerError
from reconciler.regular import read_regular
from reconciler.words import counted, plural

#: The most a saved plan or an apply job's outcome the flow reads may hold, in bytes.
DOCUMENT_LIMIT = 256 * 1024 * 1024

#: A forge cuts a status's description at 140 characters (GitHub's).
DESCRIPTION_LIMIT = 140


class Statuses(Protocol):
    """A forge that keeps commit statuses (checks branch protection can require)."""

    def set_status(self, sha: str, state: str, context: str, description: str,
                   target_url: str) -> None: ...  # fmt: skip


def plan_counts(folder: Path) -> str:
    """'eu: 1 to invite, 1 payrun; us: no changes' from the saved plans `<name>.json`."""
    said = [f"{plan.stem}: {saved_counts(plan)}" for plan in sorted(folder.glob("*.json"))]
    return "; ".join(said) or "no account planned"


def saved_counts(plan: Path) -> str:
    """'1 to invite, 1 payrun' from the saved plan file `plan`."""
    return counts(read_document(plan))


def read_document(path: Path) -> Any:
    """The JSON a job wrote at `path` (a saved plan, an apply's outcome), read only from a
    regular file: a FIFO, a socket or a device there is refused at once, never waited on."""
    try:
        text = read_regular(path, DOCUMENT_LIMIT).decode("utf-8")
    except OSError as error:
        raise ReconcilerError(f"{path}: cannot be read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ReconcilerError(f"{path}: not UTF-8 ({error.reason})") from None
    try:
        return json.loads(text)
    except ValueError as error:
        raise ReconcilerError(f"{path}: not JSON ({error})") from None


def counts(document: dict[str, object]) -> str:
    """'1 to invite, 1 payrun' from a saved plan's changes and payruns."""
    actions: dict[str, int] = {}
    changes = document.get("changes")
    for change in changes if isinstance(changes, list) else []:
        action = str(change.get("action", "change")).replace("_", " ")
        actions[action] = actions.get(action, 0) + 1
    said = [f"{counted(count)} to {action}" for action, count in actions.items()]
    payruns = document.get("payruns")
    if isinstance(payruns, list) and payruns:
        said.append(plural(len(payruns), "payrun"))
    return ", ".join(said) or "no changes"


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
