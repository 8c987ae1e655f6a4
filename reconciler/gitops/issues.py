"""The single drift issue: found by label and marker, then opened, updated or closed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from reconciler.gitops.drift import DriftAction, DriftIssue, decide_drift_issue
from reconciler.render.comment_body import fit_body
from reconciler.render.marker import Marker

DEFAULT_LABEL = "reconciler-drift"
DEFAULT_TITLE = "reconciler: the account has drifted from the desired state"
CLOSING_NOTE = "The account matches the desired state again; closing."


@dataclass(frozen=True, slots=True)
class DriftIssueResult:
    """What was done to the drift issue, and which issue (None when there is none)."""

    action: DriftAction
    number: int | None
    url: str | None


class Issues(Protocol):
    """A forge that keeps issues."""

    def find_issue(self, marker: Marker, label: str) -> tuple[DriftIssue, str] | None:
        """The oldest open issue with the label whose body starts with the marker, and its
        page."""
        ...

    def open_issue(self, title: str, body: str, label: str) -> tuple[int, str]:
        """Open it; its number and page."""
        ...

    def update_issue(self, number: int, body: str) -> None: ...

    def close_issue(self, number: int, note: str) -> None:
        """Say `note` on it and close it (done)."""
        ...


def sync_drift_issue(
    forge: Issues,
    drift_exit_status: int,
    report: str,
    marker: Marker,
    *,
    label: str = DEFAULT_LABEL,
    title: str = DEFAULT_TITLE,
) -> DriftIssueResult:
    """Make the drift issue tell what `reconciler drift` found (`report`, its Markdown)."""
    body = fit_body(marker.stamp(report))
    found = forge.find_issue(marker, label)
    existing, url = found if found is not None else (None, None)
    action = decide_drift_issue(drift_exit_status, existing, body)
    if action is DriftAction.OPEN:
        number, url = forge.open_issue(title, body, label)
        return DriftIssueResult(action, number, url)
    if existing is None:
        return DriftIssueResult(action, None, None)
    if action is DriftAction.UPDATE:
        forge.update_issue(existing.number, body)
    elif action is DriftAction.CLOSE:
        forge.close_issue(existing.number, CLOSING_NOTE)
    return DriftIssueResult(action, existing.number, url)
