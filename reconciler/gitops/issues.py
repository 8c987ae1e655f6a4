"""The single drift issue: found by label and marker, then opened, updated or closed."""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.gitops.drift import DriftAction, DriftIssue, decide_drift_issue
from reconciler.gitops.github import GitHub
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


def find_drift_issue(github: GitHub, marker: Marker, label: str) -> tuple[DriftIssue, str] | None:
    """The oldest open issue with the label whose body starts with the marker, and its page."""
    issues = github.paginate(
        github.repo_path("issues"),
        {"state": "open", "labels": label, "sort": "created", "direction": "asc"},
    )
    for issue in issues:
        if "pull_request" in issue:  # the issues list includes pull requests
            continue
        if marker.matches(issue.get("body")):
            return DriftIssue(issue["number"], issue["body"]), issue["html_url"]
    return None


def sync_drift_issue(
    github: GitHub,
    drift_exit_status: int,
    report: str,
    marker: Marker,
    *,
    label: str = DEFAULT_LABEL,
    title: str = DEFAULT_TITLE,
) -> DriftIssueResult:
    """Make the drift issue tell what `reconciler drift` found (`report`, its Markdown)."""
    body = fit_body(marker.stamp(report))
    found = find_drift_issue(github, marker, label)
    existing, url = found if found is not None else (None, None)
    action = decide_drift_issue(drift_exit_status, existing, body)
    if action is DriftAction.OPEN:
        created = github.post(
            github.repo_path("issues"), {"title": title, "body": body, "labels": [label]}
        )
        return DriftIssueResult(action, created["number"], created["html_url"])
    if existing is None:
        return DriftIssueResult(action, None, None)
    path = github.repo_path(f"issues/{existing.number}")
    if action is DriftAction.UPDATE:
        github.patch(path, {"body": body})
    elif action is DriftAction.CLOSE:
        github.post(f"{path}/comments", {"body": CLOSING_NOTE})
        github.patch(path, {"state": "closed", "state_reason": "completed"})
    return DriftIssueResult(action, existing.number, url)
